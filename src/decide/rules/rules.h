// Every rule is a pure function (Machine, Options) -> Decision, one per file
// (decide/rule_<name>.cc), each with a table-driven test beside it.
// docs/rules/ gives each rule's reason and source (a page per rule).
#pragma once

#include <vector>

#include "model/machine.h"
#include "model/plan.h"

namespace gpuenv {

using RuleFn = Decision (*)(const Machine&, const Options&);

struct Rule {
  const char* name;     // short id shown by explain ("tf32")
  const char* summary;  // one line for `gpuenv explain --rules`
  RuleFn fn;
};

/// The rules in the order they are merged.
const std::vector<Rule>& all_rules();

/// Options::cache_root without trailing slashes ("" for "/"), ready to have
/// "/<dir>" appended.
std::string cache_root_prefix(const Options& o);

/// A warning from a rule (its rule name is filled in when the rules merge).
Note warning(std::string message);

/// A rule that sets nothing and says why: "WHAT left alone: WHY".
Decision left_alone(const std::string& what, const std::string& why);

Decision rule_devices(const Machine&, const Options&);    // CUDA_DEVICE_ORDER
Decision rule_arch_list(const Machine&, const Options&);  // TORCH_CUDA_ARCH_LIST
Decision rule_tf32(const Machine&, const Options&);       // TORCH_ALLOW_TF32_CUBLAS_OVERRIDE
Decision rule_precision(const Machine&, const Options&);  // GPUENV_AUTOCAST_DTYPE, FP8/FP4
Decision rule_allocator(const Machine&, const Options&);  // PYTORCH_(CUDA_)ALLOC_CONF
Decision rule_caches(const Machine&, const Options&);     // CUDA_CACHE_*, inductor, triton
Decision rule_bytecode(const Machine&, const Options&);   // PYTHONPYCACHEPREFIX
Decision rule_cpu(const Machine&, const Options&);        // OMP_NUM_THREADS, affinity
Decision rule_nccl(const Machine&, const Options&);       // NCCL_*
Decision rule_ranks(const Machine&, const Options&);      // RANK, MASTER_ADDR, ... under srun
Decision rule_mig(const Machine&, const Options&);        // MIG addressing and warnings
Decision rule_measured(const Machine&, const Options&);   // what gpuenv bench measured

}  // namespace gpuenv
