#include "model/text.h"

namespace gpuenv {

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string utc_time(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string gpu_label(const Gpu& g) {
  return "GPU " + std::to_string(g.index) + (g.name ? " (" + *g.name + ")" : "");
}

}  // namespace gpuenv
