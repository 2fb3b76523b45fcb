// Small phrases the checks share.
#pragma once

#include <string>
#include <vector>

#include "model/machine.h"
#include "sys/text.h"
#include "sys/bytes.h"

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

}  // namespace gpuenv::diag
