// What the engine that started this process (torchrun, a Kubeflow
// PyTorchJob, a JobSet, Slurm) told it through the environment: read by
// decide/launcher_env.h, used by the cpu, nccl and mig rules, shown by explain.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpuenv {

/// The largest count or rank a launcher variable may hold (six digits): every
/// rank, node and process count gpuenv reads, keeps and computes is at most this.
inline constexpr int kMaxLaunchCount = 999999;

/// In order of precedence: the first one recognised gives the ranks.
enum class Engine { kNone, kTorchrun, kKubeflow, kJobSet, kSlurm };

/// One engine whose variables are set, and the ones it was recognised from.
struct EngineSeen {
  Engine engine = Engine::kNone;
  std::string name;                // "Slurm", "Kubeflow PyTorchJob", ...
  std::vector<std::string> vars;   // "SLURM_PROCID=1", as read
  friend bool operator==(const EngineSeen&, const EngineSeen&) = default;
};

struct LaunchEnv {
  Engine engine = Engine::kNone;  // whose ranks apply: seen[0], if any
  std::vector<EngineSeen> seen;   // every engine recognised, in precedence order
  // This process's place, as the applying engine gives it; unset when it
  // does not say (a Kubeflow pod before torchrun has no local rank).
  std::optional<int> rank, local_rank, local_world_size, world_size, node_rank, nnodes;
  // The variables those came from, for messages ("LOCAL_RANK", "SLURM_LOCALID").
  std::string local_rank_var = "LOCAL_RANK";
  std::string local_world_size_var = "LOCAL_WORLD_SIZE";
  std::string world_size_var = "WORLD_SIZE";
  bool has_local_rank = false;  // the local-rank variable is set at all
  // GPUs the engine bound to this process: CUDA_VISIBLE_DEVICES as Slurm's
  // gres plugin set it (SLURM_STEP_GPUS or SLURM_JOB_GPUS beside it). gpuenv
  // never replaces such a binding, not even with --override.
  std::optional<std::string> bound_gpus;
  std::string bound_by;              // "SLURM_STEP_GPUS=1"
  std::optional<int> cpus_per_task;  // SLURM_CPUS_PER_TASK, in a step
  // name -> "LOCAL_RANK=abc is not a non-negative integer", for each variable
  // that is set but unusable (it then reads as unset above)
  std::map<std::string, std::string> malformed;
  friend bool operator==(const LaunchEnv&, const LaunchEnv&) = default;
};

}  // namespace gpuenv
