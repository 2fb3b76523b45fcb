// The targets GPU code is built for, and their names: "sm_90" (a cubin of
// SASS), "compute_90" (PTX), with the suffixes "a" and "f". The one home of
// the sm_XY / compute_XY spelling: fatbin entries (model/fatbin.h), torch's
// architecture list and the kernel verdicts (decide/kernel_compat.h) all
// name targets through it. Pure.
#pragma once

#include <optional>
#include <string>
#include <tuple>

#include "model/machine.h"

namespace gpuenv {

/// The suffix of a target: sm_90 (plain), sm_90a (arch-specific: only that
/// exact capability), sm_100f (family-specific: that major, minor >= it).
enum class TargetVariant { kPlain, kArchSpecific, kFamily };

/// Code a binary carries for one target: a cubin (SASS) or PTX.
struct KernelTarget {
  bool ptx = false;  // false: a cubin
  ComputeCapability cc;
  TargetVariant variant = TargetVariant::kPlain;
  friend bool operator==(const KernelTarget&, const KernelTarget&) = default;
};

/// 90 -> 9.0, 100 -> 10.0, 121 -> 12.1 (the number in sm_XY / compute_XY).
ComputeCapability cc_from_arch(int arch);

/// "sm_90a", "compute_100f", "sm_80".
std::string kernel_target_name(const KernelTarget& t);

/// Parses "sm_90", "sm_90a", "sm_100f", "compute_120" (kernel_target_name's
/// output); nullopt for anything else.
std::optional<KernelTarget> parse_kernel_target(const std::string& name);

/// The order targets are listed in: cubins first, then by capability, then
/// plain < a < f: "sm_90", "sm_90a", "sm_100f", "compute_90". A name that is
/// no target sorts after every target, by its text.
bool target_listed_before(const std::string& a, const std::string& b);

}  // namespace gpuenv
