#include "act/render/printable.h"

#include <fmt/format.h>

namespace gpuenv {
namespace {

// The length of the valid UTF-8 sequence at s[i] (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF), or 0.
size_t utf8_length(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
  auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xbf) { return byte(k) >= lo && byte(k) <= hi; };
  unsigned c = byte(i);
  if (c >= 0xc2 && c <= 0xdf) return cont(i + 1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    return cont(i + 1, lo, hi) && cont(i + 2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    return cont(i + 1, lo, hi) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  }
  return 0;
}

std::string sanitise(std::string_view s, bool keep_lines) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      bool layout = keep_lines && (c == '\n' || c == '\t');
      out += (c < 0x20 && !layout) || c == 0x7f ? fmt::format("\\x{:02x}", c) : std::string(1, char(c));
      ++i;
      continue;
    }
    size_t n = utf8_length(s, i);
    if (n == 0) out += fmt::format("\\x{:02x}", c), n = 1;  // not UTF-8: a raw 0x9B is CSI to some terminals
    else if (c == 0xc2 && static_cast<unsigned char>(s[i + 1]) < 0xa0)
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(s[i + 1]));  // C1: U+0080-U+009F
    else out.append(s.substr(i, n));
    i += n;
  }
  return out;
}

}  // namespace

bool valid_utf8(std::string_view s) {
  for (size_t i = 0, n = 0; i < s.size(); i += n) {
    n = static_cast<unsigned char>(s[i]) < 0x80 ? 1 : utf8_length(s, i);
    if (n == 0) return false;
  }
  return true;
}

std::string printable(std::string_view s) { return sanitise(s, false); }

std::string printable_lines(std::string_view s) { return sanitise(s, true); }

}  // namespace gpuenv
