#include "decide/export/web_config.h"

#include <gtest/gtest.h>

namespace gpuenv {
namespace {

const char* kHash = "$2y$10$Kq3vN8zR1wT5yB7dF9hJ2epBpmxcytG5OiQhijbTHeCsGmyWfc3EC";

WebConfig web_parsed(const std::string& yaml) {
  WebConfig c;
  std::string err;
  EXPECT_TRUE(parse_web_config(yaml, "/etc/gpuenv", &c, &err)) << err;
  return c;
}

std::string web_error(const std::string& yaml) {
  WebConfig c;
  std::string err;
  EXPECT_FALSE(parse_web_config(yaml, "/etc/gpuenv", &c, &err));
  return err;
}

TEST(WebConfig, TlsAndUsersAsTheToolkitWritesThem) {
  WebConfig c = web_parsed(std::string("tls_server_config:\n  cert_file: server.crt\n  key_file: /k/server.key\n"
                                   "  client_ca_file: ca.crt\n  client_auth_type: RequireAndVerifyClientCert\n"
                                   "  min_version: TLS13\nbasic_auth_users:\n  prometheus: ") + kHash + "\n");
  ASSERT_TRUE(c.tls);
  EXPECT_EQ(c.tls->cert_file, "/etc/gpuenv/server.crt");  // relative to the file's directory
  EXPECT_EQ(c.tls->key_file, "/k/server.key");
  EXPECT_EQ(c.tls->client_ca_file, "/etc/gpuenv/ca.crt");
  EXPECT_EQ(c.tls->client_auth_type, "RequireAndVerifyClientCert");
  EXPECT_EQ(c.tls->min_version, "TLS13");
  EXPECT_EQ(c.users, (std::map<std::string, std::string>{{"prometheus", kHash}}));
}

TEST(WebConfig, AnEmptyFileIsPlainHttpWithoutAuth) {
  WebConfig c = web_parsed("");
  EXPECT_FALSE(c.tls);
  EXPECT_TRUE(c.users.empty());
  EXPECT_EQ(web_parsed("basic_auth_users:\n  u: " + std::string(kHash) + "\n").tls, std::nullopt);
  EXPECT_EQ(web_parsed("tls_server_config:\n  cert_file: a\n  key_file: b\n").tls->min_version, "TLS12");
}

TEST(WebConfig, WhatIsWrongIsNamed) {
  EXPECT_EQ(web_error("tls_server_config:\n  key_file: k\n"), "tls_server_config needs cert_file");
  EXPECT_EQ(web_error("tls_server_config:\n  cert_file: c\n"), "tls_server_config needs key_file");
  EXPECT_EQ(web_error("tls_server_config:\n  cert_file: c\n  key_file: k\n  client_auth_type: Maybe\n"),
            "tls_server_config.client_auth_type \"Maybe\" is not one of NoClientCert, RequestClientCert, "
            "RequireAnyClientCert, VerifyClientCertIfGiven, RequireAndVerifyClientCert");
  EXPECT_EQ(web_error("tls_server_config:\n  cert_file: c\n  key_file: k\n  client_auth_type: VerifyClientCertIfGiven\n"),
            "tls_server_config.client_auth_type VerifyClientCertIfGiven needs client_ca_file");
  EXPECT_EQ(web_error("tls_server_config:\n  cert_file: c\n  key_file: k\n  min_version: TLS13\n  max_version: TLS12\n"),
            "tls_server_config.max_version is older than min_version");
  EXPECT_EQ(web_error("tls_server_config:\n  cert_file: c\n  key_file: k\n  cipher_suites: [x]\n"),
            "tls_server_config.cipher_suites is not supported by gpuenv (it reads cert_file, key_file, "
            "client_ca_file, client_auth_type, min_version, max_version)");
  EXPECT_EQ(web_error("http_server_config:\n  http2: false\n"),
            "http_server_config is not supported by gpuenv (it reads tls_server_config and basic_auth_users)");
  EXPECT_EQ(web_error("basic_auth_users:\n  u: password\n"),
            "basic_auth_users.u is not a bcrypt hash ($2y$10$... from `htpasswd -nbBC 10 \"\" PASSWORD`)");
  EXPECT_EQ(web_error("basic_auth_users: [a]\n"), "basic_auth_users must be a mapping");
  EXPECT_EQ(web_error("- a\n"), "the file must be a mapping");
  EXPECT_EQ(web_error("a: [\n").rfind("not YAML: ", 0), 0u);
  EXPECT_EQ(web_error("basic_auth_users:\n  u: " + std::string(kHash) + "\n  u: " + kHash + "\n"),
            "basic_auth_users: u is given twice");
}

}  // namespace
}  // namespace gpuenv
