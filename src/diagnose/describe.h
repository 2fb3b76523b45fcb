// Small phrases the checks share.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "model/machine.h"
#include "model/text.h"

namespace gpuenv::diag {

/// "a, b and c"
inline std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i)
    out += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  return out;
}

inline bool has_node(const Host& h, const std::string& path) {
  for (const auto& n : h.nvidia_device_nodes)
    if (n == path) return true;
  return false;
}

/// "64 MiB", "1.5 GiB"
inline std::string bytes_text(std::uint64_t b) {
  if (b >= (1ull << 30)) {
    double g = double(b) / double(1ull << 30);
    char buf[32];
    std::snprintf(buf, sizeof buf, g == double(std::uint64_t(g)) ? "%.0f GiB" : "%.1f GiB", g);
    return buf;
  }
  return std::to_string(b >> 20) + " MiB";
}

}  // namespace gpuenv::diag
