// libFuzzer: any bytes as a label value (NVML's names and UUIDs, the plan's
// values) and as --listen keep a scrape parseable: the escaped value is
// UTF-8 with no raw newline and no unescaped quote, and it unescapes to the
// input when the input was UTF-8. A listen address parses only when its
// formatted form parses back to the same address.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "act/serve/http_server.h"
#include "act/render/printable.h"
#include "act/render/prometheus_text.h"

namespace {

std::string unescape(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      if (s[i] == '"' || s[i] == '\n') std::abort();  // must have been escaped
      out += s[i];
      continue;
    }
    if (++i == s.size()) std::abort();  // a lone trailing backslash
    out += s[i] == 'n' ? '\n' : s[i];
    if (s[i] != 'n' && s[i] != '\\' && s[i] != '"') std::abort();
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string in(reinterpret_cast<const char*>(data), size);
  std::string escaped = gpuenv::prometheus::escape_label_value(in);
  if (!gpuenv::valid_utf8(escaped)) std::abort();
  std::string back = unescape(escaped);
  if (gpuenv::valid_utf8(in) && back != in) std::abort();
  gpuenv::ListenAddress a, again;
  std::string err;
  if (gpuenv::parse_listen_address(in, &a, &err)) {
    if (!gpuenv::parse_listen_address(gpuenv::format_listen_address(a), &again, &err)) std::abort();
    if (again.host != a.host || again.port != a.port || again.ipv6 != a.ipv6) std::abort();
  } else if (err.empty()) {
    std::abort();
  }
  return 0;
}
