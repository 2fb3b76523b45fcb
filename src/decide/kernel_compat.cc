#include "decide/kernel_compat.h"

#include <algorithm>

#include "decide/arch.h"
#include "sys/text.h"

namespace gpuenv {
namespace {

bool is_tegra(ComputeCapability cc) {
  const ArchInfo* a = arch_info(cc);
  return a && a->tegra;
}

// The driver's preference among usable cubins: the exact capability, then
// the highest; among equals, the most specific variant.
bool better_cubin(const KernelTarget& a, const KernelTarget& b, ComputeCapability gpu) {
  if ((a.cc == gpu) != (b.cc == gpu)) return a.cc == gpu;
  if (a.cc != b.cc) return a.cc > b.cc;
  return a.variant > b.variant;
}

std::optional<KernelTarget> best_cubin(const std::vector<KernelTarget>& targets,
                                       ComputeCapability gpu) {
  std::optional<KernelTarget> best;
  for (const auto& t : targets)
    if (!t.ptx && cubin_runs_on(t, gpu) && (!best || better_cubin(t, *best, gpu))) best = t;
  return best;
}

std::optional<KernelTarget> best_ptx(const std::vector<KernelTarget>& targets,
                                     ComputeCapability gpu) {
  std::optional<KernelTarget> best;
  for (const auto& t : targets)
    if (t.ptx && ptx_jits_for(t, gpu) && (!best || t.cc > best->cc)) best = t;
  return best;
}

std::string list_targets(const std::vector<KernelTarget>& targets) {
  std::vector<std::string> names;
  for (const auto& t : targets) {
    std::string n = kernel_target_name(t);
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  }
  return names.empty() ? "none" : join(names, ", ");
}

KernelCompat native(const KernelTarget& cubin, ComputeCapability gpu) {
  std::string why = "runs the " + kernel_target_name(cubin) + " cubin natively";
  if (cubin.cc != gpu) why += " (cubins run on later minor revisions of the same major)";
  return {KernelVerdict::kNative, cubin, why};
}

KernelCompat jit(const KernelTarget& ptx, ComputeCapability gpu) {
  return {KernelVerdict::kPtxJit, ptx,
          "no cubin for " + cc_string(gpu) + "; the driver JIT-compiles the " +
              kernel_target_name(ptx) +
              " PTX when the kernels are first loaded: a slow first start (minutes for a large "
              "library), then cached in CUDA_CACHE_PATH only if it fits CUDA_CACHE_MAXSIZE "
              "(raise it to 4294967296)"};
}

}  // namespace

bool cubin_runs_on(const KernelTarget& cubin, ComputeCapability gpu) {
  if (cubin.cc == gpu) return true;
  if (cubin.variant == TargetVariant::kArchSpecific) return false;
  if (is_tegra(cubin.cc) || is_tegra(gpu)) return false;
  return cubin.cc.major == gpu.major && cubin.cc.minor <= gpu.minor;
}

bool ptx_jits_for(const KernelTarget& ptx, ComputeCapability gpu) {
  switch (ptx.variant) {
    case TargetVariant::kArchSpecific: return ptx.cc == gpu;
    case TargetVariant::kFamily: return ptx.cc.major == gpu.major && ptx.cc.minor <= gpu.minor;
    case TargetVariant::kPlain: break;
  }
  return ptx.cc <= gpu;
}

std::string verdict_name(KernelVerdict v) {
  switch (v) {
    case KernelVerdict::kNative: return "native";
    case KernelVerdict::kPtxJit: return "ptx_jit";
    case KernelVerdict::kCannotRun: break;
  }
  return "cannot_run";
}

KernelCompat kernel_compat(const std::vector<KernelTarget>& targets, ComputeCapability gpu) {
  if (auto cubin = best_cubin(targets, gpu)) return native(*cubin, gpu);
  if (auto ptx = best_ptx(targets, gpu)) return jit(*ptx, gpu);
  return {KernelVerdict::kCannotRun, std::nullopt,
          "no cubin or PTX usable on " + cc_string(gpu) + " (it has: " + list_targets(targets) +
              "); launching a kernel fails with \"no kernel image is available for execution on "
              "the device\""};
}

}  // namespace gpuenv
