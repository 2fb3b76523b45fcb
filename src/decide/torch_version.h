// The version string of the installed PyTorch, parsed: "2.11.0+cu130",
// "2.9.0a0+gitabc1234", "2.12.0.dev20260101+cu130", "2.5.0a0+872d972.nv24.08".
#pragma once

#include <optional>
#include <string>

namespace gpuenv {

struct TorchVersion {
  int major = 0, minor = 0, patch = 0;
  std::string suffix;  // what follows X.Y[.Z] before '+': "a0", ".dev20260101", ""
  std::string local;   // after '+': "cu130", "gitabc1234", ""
  bool at_least(int maj, int min) const { return major != maj ? major > maj : minor >= min; }
  /// True for the builds download.pytorch.org and PyPI ship: no local label,
  /// or a "cuNNN"/"cpu" one. Source, NGC and Jetson builds are not.
  bool official_build() const;
};

/// nullopt when `v` does not start with "MAJOR.MINOR".
std::optional<TorchVersion> parse_torch_version(const std::string& v);

}  // namespace gpuenv
