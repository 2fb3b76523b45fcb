// libFuzzer: any bytes as a counters CSV (export -f) either parse into
// lines gpuenv can judge (a field name of letters, digits and _, a known
// type, a line number within the text, no control character in the help)
// or fail naming a line.
#include <cstdint>
#include <string>
#include <string_view>

#include "decide/export/counters_csv.h"
#include "fuzz_check.h"

namespace {

bool plain(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t') return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<gpuenv::DcgmCounter> out;
  std::string err;
  if (!gpuenv::parse_dcgm_counters(text, &out, &err)) {
    CHECK(err.rfind("line ", 0) == 0);
    return 0;
  }
  int lines = 1;
  for (char c : text) lines += c == '\n';
  int last = 0;
  for (const gpuenv::DcgmCounter& c : out) {
    CHECK(!c.field.empty() && c.field.find_first_not_of(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") == std::string::npos);
    CHECK(c.type == "gauge" || c.type == "counter" || c.type == "histogram" || c.type == "summary" ||
          c.type == "label");
    CHECK(plain(c.help));
    CHECK(c.line > last && c.line <= lines);
    last = c.line;
  }
  return 0;
}
