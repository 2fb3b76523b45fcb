// HTTP basic auth against bcrypt hashes, as exporter-toolkit's
// basic_auth_users checks it: libxcrypt's crypt_r ($2y$/$2b$/$2a$), a
// constant-time comparison, and the same work for an unknown user as for a
// known one. A bcrypt check costs its cost factor's time (about 50 ms at
// 10), so a user's last good password is remembered as a SHA-256 digest and
// a repeat scrape costs a digest, not a bcrypt.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace gpuenv {

/// The user name and password of an `Authorization: Basic ...` header's
/// value; false when it is not one (another scheme, not base64, no ':').
bool parse_basic_authorization(std::string_view header, std::string* user, std::string* password);

/// Whether `password` hashes to `hash` (a bcrypt hash): crypt_r, then a
/// constant-time comparison.
bool bcrypt_matches(const std::string& hash, const std::string& password);

class BasicAuth {
 public:
  /// `users`: name -> bcrypt hash (decide/export/web_config.h). Empty: every request passes.
  explicit BasicAuth(std::map<std::string, std::string> users) : users_(std::move(users)) {}
  bool enabled() const { return !users_.empty(); }
  /// Whether the Authorization header's value (nullptr: none) names a user
  /// and its password.
  bool allows(const char* authorization);

 private:
  std::map<std::string, std::string> users_;
  std::map<std::string, std::string> good_;  // user -> SHA-256 of its last password that matched
};

}  // namespace gpuenv
