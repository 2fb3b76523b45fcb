#include "act/serve/basic_auth.h"

#include <crypt.h>
#include <gtest/gtest.h>

#include <memory>

namespace gpuenv {
namespace {

std::string hash_of(const std::string& password) {
  // Made here by libxcrypt itself at cost 4 (quick), so the test needs no fixed vector.
  auto d = std::make_unique<crypt_data>();
  return crypt_r(password.c_str(), "$2b$04$abcdefghijklmnopqrstuu", d.get());
}

TEST(BasicAuth, ParsesTheHeader) {
  std::string u, p;
  ASSERT_TRUE(parse_basic_authorization("Basic cHJvbTpzM2NyZXQ6eA==", &u, &p));  // prom:s3cret:x
  EXPECT_EQ(u, "prom");
  EXPECT_EQ(p, "s3cret:x");
  ASSERT_TRUE(parse_basic_authorization("basic  dTo= ", &u, &p));  // u:
  EXPECT_EQ(u, "u");
  EXPECT_EQ(p, "");
  EXPECT_FALSE(parse_basic_authorization("Bearer abc", &u, &p));
  EXPECT_FALSE(parse_basic_authorization("Basic !!!!", &u, &p));
  EXPECT_FALSE(parse_basic_authorization("Basic dXNlcg==", &u, &p));  // "user": no colon
  EXPECT_FALSE(parse_basic_authorization("Basic", &u, &p));
}

TEST(BasicAuth, BcryptMatchesOnlyItsPassword) {
  std::string h = hash_of("s3cret");
  EXPECT_TRUE(bcrypt_matches(h, "s3cret"));
  EXPECT_FALSE(bcrypt_matches(h, "s3cre"));
  EXPECT_FALSE(bcrypt_matches(h, ""));
  EXPECT_FALSE(bcrypt_matches("$2y$04$abc", "s3cret"));  // a cut hash: crypt_r fails, and so does the check
}

TEST(BasicAuth, AllowsAKnownUserWithItsPasswordOnly) {
  BasicAuth auth({{"prom", hash_of("s3cret")}});
  EXPECT_TRUE(auth.enabled());
  EXPECT_TRUE(auth.allows("Basic cHJvbTpzM2NyZXQ="));   // prom:s3cret
  EXPECT_TRUE(auth.allows("Basic cHJvbTpzM2NyZXQ="));   // again, from the remembered digest
  EXPECT_FALSE(auth.allows("Basic cHJvbTpzM2NyZXQx"));  // prom:s3cret1
  EXPECT_FALSE(auth.allows("Basic YWxpY2U6czNjcmV0"));  // alice:s3cret
  EXPECT_FALSE(auth.allows(nullptr));
  EXPECT_FALSE(BasicAuth({}).enabled());
}

}  // namespace
}  // namespace gpuenv
