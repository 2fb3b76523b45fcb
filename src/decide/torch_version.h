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
  /// A pre-release (a0, rc1, .dev...) or a local build (NGC, source, ROCm):
  /// no index serves it under its version, so it is never reinstalled.
  bool not_reinstallable() const { return !suffix.empty() || !official_build(); }
  /// NVIDIA's build, as in NGC containers: a local label with ".nv" ("nv25.12").
  bool nvidia_build() const;
  /// "2.14.0": the release and patch, without pre-release or local parts.
  std::string release_version() const;
  /// -1, 0, 1 comparing major.minor with `other`'s.
  int compare_release(const TorchVersion& other) const;
};

/// nullopt when `v` does not start with "MAJOR.MINOR".
std::optional<TorchVersion> parse_torch_version(const std::string& v);

}  // namespace gpuenv
