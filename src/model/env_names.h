// The environment variables gpuenv reads or may set.
#pragma once

#include <string>
#include <vector>

namespace gpuenv {

/// Every variable name a rule may set, plus those that steer rules
/// (CUDA_VISIBLE_DEVICES, LOCAL_RANK, ...): what sense records in
/// Machine::env and what the CLI overlays from the live environment.
/// Nothing else of the environment enters a snapshot.
const std::vector<std::string>& steering_env_names();

}  // namespace gpuenv
