// Whether a GPU can run the kernels a binary carries: natively from a cubin
// (SASS), only by JIT-compiling PTX, or not at all, which CUDA reports as
// "no kernel image is available for execution on the device". Pure.
// NVIDIA's rules, with sources, are in docs/inspect.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/hardware/kernel_target.h"
#include "model/machine.h"

namespace gpuenv {

/// Whether a cubin built for `cubin` runs on a GPU of capability `gpu`:
/// same major and minor <= the GPU's; `a` only on that exact capability;
/// `f` on its family (same major, minor >=); never across Tegra and
/// discrete parts except on the exact capability.
bool cubin_runs_on(const KernelTarget& cubin, ComputeCapability gpu);

/// Whether the driver can JIT-compile PTX for `ptx` to a GPU of capability
/// `gpu`: plain PTX for any capability >= its own; `a` PTX only for that
/// exact capability; `f` PTX for its family.
bool ptx_jits_for(const KernelTarget& ptx, ComputeCapability gpu);

enum class KernelVerdict { kNative, kPtxJit, kCannotRun };

/// "native", "ptx_jit", "cannot_run".
std::string verdict_name(KernelVerdict v);

struct KernelCompat {
  KernelVerdict verdict = KernelVerdict::kCannotRun;
  // What the driver would load: the best cubin, or the PTX it compiles.
  std::optional<KernelTarget> image;
  std::string reason;  // one sentence, naming the image or what is missing
};

/// The verdict for a binary carrying `targets` on a GPU of capability
/// `gpu`. A compatible cubin wins (the exact capability first, then the
/// highest minor); else the highest PTX that can be JIT-compiled.
KernelCompat kernel_compat(const std::vector<KernelTarget>& targets, ComputeCapability gpu);

}  // namespace gpuenv
