// Two checks nearly every test file wants: does a text hold a part, and what
// does a file hold. One definition, so that test sources compiled together
// (a unity batch, cmake/GpuenvUnity.cmake) do not each bring their own.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace gpuenv::testing {

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// The whole file, byte for byte; "" when it cannot be read.
inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream b;
  b << in.rdbuf();
  return b.str();
}

}  // namespace gpuenv::testing
