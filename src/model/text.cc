#include "model/text.h"

#include <algorithm>
#include <cctype>

namespace gpuenv {

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i <= s.size()) {
    std::size_t j = std::min(s.find(',', i), s.size());
    std::string w = s.substr(i, j - i);
    w.erase(0, w.find_first_not_of(" \t"));
    w.erase(w.find_last_not_of(" \t") + 1);
    if (!w.empty()) out.push_back(w);
    i = j + 1;
  }
  return out;
}

std::string ascii_lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string utc_time(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string utc_now() { return utc_time(std::time(nullptr)); }

std::string gpu_label(const Gpu& g) {
  return "GPU " + std::to_string(g.index) + (g.name ? " (" + *g.name + ")" : "");
}

}  // namespace gpuenv
