#include "decide/rules/rules.h"

namespace gpuenv {

const std::vector<Rule>& all_rules() {
  static const std::vector<Rule> kRules = {
      {"devices", "number CUDA devices as nvidia-smi does (PCI bus order)", rule_devices},
      {"arch_list", "build CUDA extensions for exactly the GPUs present", rule_arch_list},
      {"tf32", "TF32 tensor cores for fp32 matmuls on Ampere and newer", rule_tf32},
      {"precision", "autocast dtype and FP8/FP4 capability", rule_precision},
      {"allocator", "expandable segments in the caching allocator", rule_allocator},
      {"caches", "persistent JIT, Inductor and Triton caches", rule_caches},
      {"bytecode", "Python bytecode under the cache root when torch ships none", rule_bytecode},
      {"cpu", "CPU threads and NUMA-local affinity per GPU", rule_cpu},
      {"nccl", "NCCL settings that detection justifies, nothing more", rule_nccl},
      {"ranks", "torch.distributed's env:// variables from Slurm's under srun", rule_ranks},
      {"mig", "MIG devices addressed by UUID", rule_mig},
      {"measured", "P2P and GPU health as gpuenv bench measured them", rule_measured},
  };
  return kRules;
}

std::string cache_root_prefix(const Options& o) {
  std::string root = o.cache_root;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  return root == "/" ? "" : root;
}

Note warning(std::string message) { return {Severity::kWarning, "", std::move(message)}; }

Decision left_alone(const std::string& what, const std::string& why) {
  Decision d;
  d.notes.push_back(warning(what + " left alone: " + why));
  return d;
}

}  // namespace gpuenv
