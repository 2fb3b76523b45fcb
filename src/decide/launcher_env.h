// The one place that reads what a launcher told this process: torchrun, a
// Kubeflow PyTorchJob, a JobSet (or any Indexed Job), Slurm. Pure: it reads
// Options::env only, and every name it reads is in model/env_names.cc so
// snapshots record it. Shared by the cpu, nccl and mig rules and explain.
// docs/cluster.md, "Launchers gpuenv recognises".
#pragma once

#include <optional>
#include <string>

#include "model/launch.h"
#include "model/plan.h"

namespace gpuenv {

/// Recognises every engine whose variables are set, in order of precedence
/// (torchrun, Kubeflow PyTorchJob, JobSet, Slurm); the first gives the ranks.
LaunchEnv launch_env(const Options& o);

/// "Slurm (SLURM_PROCID=1, SLURM_LOCALID=1, SLURM_NTASKS=2)"; with more than
/// one engine, the others follow: "torchrun (...), inside Slurm (...)".
/// "" when no engine was recognised.
std::string launch_summary(const LaunchEnv& l);

/// "torchrun", "Slurm", ... ("" for kNone): the engine's short id for JSON.
const char* engine_id(Engine e);

/// When the local rank this process was given (LOCAL_RANK, or Slurm's
/// SLURM_LOCALID that rule ranks copies into it) is no index of the GPUs it
/// sees: CUDA_VISIBLE_DEVICES lists fewer (Slurm's --gpus-per-task or
/// --gpu-bind gives each task its own). LOCAL_RANK stays the rank on the
/// node, as torchrun and PyTorch Lightning mean it (a script's "local rank
/// 0 downloads" needs it), so `torch.cuda.set_device(LOCAL_RANK)` fails with
/// "invalid device ordinal": the warning saying so and what to call
/// instead; "" when the rank is a visible index (or nothing says).
std::string local_rank_beyond_visible(const LaunchEnv& l, const Options& o);

/// A non-negative decimal integer up to kMaxLaunchCount (999999), as launchers write them;
/// nullopt for anything else ("", "-1", "3 ", "0x2").
std::optional<int> parse_count(const std::string& s);

/// The entry for node `node` of Slurm's tasks-per-node form ("2(x3),1":
/// nodes 0-2 run 2 tasks, node 3 runs 1); nullopt when malformed or out of range.
std::optional<int> slurm_tasks_on_node(const std::string& tasks_per_node, int node);

/// The first host of a Slurm hostlist ("gpu[07-09,12],cpu1" -> "gpu07",
/// "rack[1-2]-n[01-04]" -> "rack1-n01"); nullopt when malformed or when the
/// name holds a character no hostname has.
std::optional<std::string> slurm_first_host(const std::string& nodelist);

}  // namespace gpuenv
