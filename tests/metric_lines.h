// The sample lines of a Prometheus text body that belong to one metric.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace gpuenv::testing {

/// The sample lines of `text` whose metric name is `family` exactly (with
/// labels or without), in order.
inline std::vector<std::string> lines_of(const std::string& text, const std::string& family) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(family, 0) == 0 && (line[family.size()] == '{' || line[family.size()] == ' '))
      out.push_back(line);
  return out;
}

/// The lines of `text` that start with `prefix`, in order.
inline std::vector<std::string> lines_starting(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) out.push_back(line);
  return out;
}

}  // namespace gpuenv::testing
