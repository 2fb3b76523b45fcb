// The judgements of `gpuenv run` (flow/run.h), plain functions of
// data: which GPUs the job uses, how many CPUs each gets, the script it runs,
// whether and how often it is watched. docs/feedback.md.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/machine.h"
#include "model/plan.h"

namespace gpuenv {

/// The UUIDs of the devices this process's job uses: the plan's visible
/// GPUs and the one MIG device CUDA gives it (its MIG- UUID), or under a
/// launcher's LOCAL_RANK the one of that rank.
std::vector<std::string> job_gpus(const Machine& m, const Options& o);

/// The CPUs each of the job's GPUs gets: the plan's binding, else the usable
/// CPUs shared among the node's local ranks; nullopt when neither is known.
std::optional<int> cpus_per_gpu(const Machine& m, const Plan& plan, const Options& o);

/// The script a command runs: its first argument after the program that is a
/// file (train.py of `python train.py`), else the program when named by path;
/// "" when none. `is_file`: whether a path names a regular file.
std::string script_of(const std::vector<std::string>& argv, const std::function<bool(const std::string&)>& is_file);

/// Whether the job is watched: not under --no-watch nor GPUENV_WATCH=0
/// (`watch_var`: its value, "" when unset).
bool watch_enabled(bool no_watch, const std::string& watch_var);

/// The sampling interval from GPUENV_WATCH_INTERVAL_MS's value: 50 to 60000
/// ms, else 1000.
std::chrono::milliseconds watch_interval(const std::string& interval_ms);

}  // namespace gpuenv
