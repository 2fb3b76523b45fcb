// inspect's judgement of one file's CUDA code (model/fatbin.h) against the
// GPUs of a Machine: what it carries per target, and for each GPU whether
// it runs natively, only by JIT-compiling PTX, or not at all, over the whole
// file and per fatbin (each is a module the CUDA runtime loads on its own).
// The rules per target are decide/kernel_compat.h's. Pure. docs/inspect.md.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "decide/kernel_compat.h"
#include "model/fatbin.h"
#include "model/machine.h"

namespace gpuenv {

/// Where a target's row sorts: cubins, PTX, LTO-IR, unknown kinds
/// (kind_order 0-3); then by architecture, plain before `a` before `f`.
struct TargetKey {
  int kind_order = 0;
  int arch = 0;
  int variant = 0;  // TargetVariant
  std::uint16_t kind = 0;
  auto operator<=>(const TargetKey&) const = default;
};

/// The entries a file has for one target.
struct TargetCount {
  std::string name;  // fatbin_target_name: "sm_90a", "compute_90", "lto_90"
  int count = 0, compressed = 0;
  std::set<std::pair<int, int>> isa;  // PTX ISA versions seen
};

/// The entries of one section kind (.nv_fatbin, or __nv_relfatbin).
struct TargetCounts {
  std::map<TargetKey, TargetCount> targets;
  int fatbins = 0, entries = 0, compressed = 0;
};

/// One GPU's verdict on a file.
struct GpuVerdict {
  const Gpu* gpu = nullptr;            // in the Machine judged against
  std::optional<KernelCompat> compat;  // over every target; nullopt: cc unknown
  int fatbins_without_image = 0;       // fatbins whose kernels fail if launched
  int fatbins_jit = 0;                 // fatbins it runs only through PTX JIT
};

/// What one file carries and how each GPU fares with it.
struct BinaryVerdict {
  /// FatbinFile::relfatbin_only(): __nv_relfatbin is what is counted and judged.
  bool relocatable = false;
  TargetCounts used;
  /// __nv_relfatbin beside a .nv_fatbin: counted, not loaded, not judged.
  std::optional<TargetCounts> device_link;
  /// One per GPU of the Machine, in its order; empty when `used` has no entries.
  std::vector<GpuVerdict> gpus;
};

/// Counts `f`'s code and judges it against every GPU of `m`.
BinaryVerdict judge_binary(const FatbinFile& f, const Machine& m);

/// The worst verdict any GPU gives (cannot run, then PTX JIT, then native);
/// nullopt when no GPU of known capability was judged.
std::optional<KernelVerdict> worst_verdict(const BinaryVerdict& v);

}  // namespace gpuenv
