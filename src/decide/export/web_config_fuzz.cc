// libFuzzer: any bytes as a web config (export --web-config-file) either
// fail with a reason or give TLS with both files and a known client auth
// type, and users whose hashes are bcrypt's 60 characters.
#include <cstdint>
#include <string>
#include <string_view>

#include "decide/export/web_config.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  gpuenv::WebConfig c;
  std::string err;
  if (!gpuenv::parse_web_config(text, "/etc/gpuenv", &c, &err)) {
    CHECK(!err.empty());
    return 0;
  }
  if (c.tls) CHECK(!c.tls->cert_file.empty() && !c.tls->key_file.empty() && !c.tls->min_version.empty());
  for (const auto& [user, hash] : c.users) CHECK(!user.empty() && hash.size() == 60 && hash.rfind("$2", 0) == 0);
  return 0;
}
