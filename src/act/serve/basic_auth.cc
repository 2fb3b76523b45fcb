#include "act/serve/basic_auth.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include <memory>

namespace gpuenv {
namespace {

// A bcrypt hash of a password nobody has: an unknown user costs what a known one does.
constexpr const char* kNobody = "$2y$10$Kq3vN8zR1wT5yB7dF9hJ2epBpmxcytG5OiQhijbTHeCsGmyWfc3EC";

bool same(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string sha256(const std::string& s) {
  unsigned char d[SHA256_DIGEST_LENGTH];
  unsigned int n = 0;
  EVP_Digest(s.data(), s.size(), d, &n, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<const char*>(d), n);
}

bool base64_decode(std::string_view in, std::string* out) {
  if (in.empty() || in.size() % 4 != 0 || in.size() > 4096) return false;
  std::string buf(in.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(buf.data()), reinterpret_cast<const unsigned char*>(in.data()),
                          static_cast<int>(in.size()));
  if (n < 0) return false;
  std::size_t pad = (in.back() == '=') + (in.size() > 1 && in[in.size() - 2] == '=');
  buf.resize(static_cast<std::size_t>(n) - pad);
  *out = std::move(buf);
  return true;
}

}  // namespace

bool parse_basic_authorization(std::string_view header, std::string* user, std::string* password) {
  constexpr std::string_view kScheme = "basic ";
  if (header.size() < kScheme.size()) return false;
  for (std::size_t i = 0; i < kScheme.size(); ++i)
    if ((header[i] | 0x20) != kScheme[i]) return false;
  header.remove_prefix(kScheme.size());
  while (!header.empty() && header.front() == ' ') header.remove_prefix(1);
  while (!header.empty() && header.back() == ' ') header.remove_suffix(1);
  std::string plain;
  if (!base64_decode(header, &plain)) return false;
  std::size_t colon = plain.find(':');
  if (colon == std::string::npos) return false;
  *user = plain.substr(0, colon);
  *password = plain.substr(colon + 1);
  return true;
}

bool bcrypt_matches(const std::string& hash, const std::string& password) {
  auto data = std::make_unique<crypt_data>();  // about 32 KiB: not on the stack
  const char* got = crypt_r(password.c_str(), hash.c_str(), data.get());
  return got != nullptr && got[0] != '*' && same(got, hash);
}

bool BasicAuth::allows(const char* authorization) {
  std::string user, password;
  if (authorization == nullptr || !parse_basic_authorization(authorization, &user, &password)) return false;
  if (password.find('\0') != std::string::npos) return false;
  auto u = users_.find(user);
  std::string digest = sha256(password);
  auto g = good_.find(user);
  if (u != users_.end() && g != good_.end() && same(g->second, digest)) return true;
  bool ok = bcrypt_matches(u == users_.end() ? kNobody : u->second, password) && u != users_.end();
  if (ok) good_[user] = digest;
  return ok;
}

}  // namespace gpuenv
