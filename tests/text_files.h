// Checks nearly every test file wants: does a text hold a part, what does a
// file hold, and its permission bits. One definition, so that test sources
// compiled together (a unity batch, cmake/GpuenvUnity.cmake) do not each
// bring their own.
#pragma once

#include <sys/stat.h>

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

/// The permission bits (07777) of `path`, following a symlink; 0 when the
/// path is not there.
inline mode_t mode_of(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0;
}

/// The same of `path` itself, a symlink not followed (lstat).
inline mode_t link_mode_of(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0;
}

}  // namespace gpuenv::testing
