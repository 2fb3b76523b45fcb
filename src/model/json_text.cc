#include "model/json_text.h"

#include <fmt/format.h>

namespace gpuenv {

// In valid UTF-8, 0xC2 is always a lead byte, and 0xC2 0x80-0x9F is exactly
// U+0080-U+009F; outside strings JSON holds neither it nor DEL.
std::string json_escape_controls(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  for (size_t i = 0; i < json.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(json[i]);
    unsigned char next = i + 1 < json.size() ? static_cast<unsigned char>(json[i + 1]) : 0;
    if (c == 0x7f) out += "\\u007f";
    else if (c == 0xc2 && next >= 0x80 && next < 0xa0) out += fmt::format("\\u{:04x}", next), ++i;
    else out += char(c);
  }
  return out;
}

}  // namespace gpuenv
