// What a launcher (torchrun, or anything that sets the same variables) told
// this process, read from Options::env. Shared by the cpu, nccl and mig rules.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "model/plan.h"

namespace gpuenv {

struct LaunchEnv {
  bool has_local_rank = false;          // LOCAL_RANK is set at all (torchrun)
  std::optional<int> local_rank;        // set and a valid number
  std::optional<int> local_world_size;  // set, a number, at least 1
  std::optional<int> world_size;        // set, a number, at least 1
  // name -> "LOCAL_RANK=abc is not a non-negative integer", for each variable
  // that is set but unusable (it then reads as unset above)
  std::map<std::string, std::string> malformed;
};

LaunchEnv launch_env(const Options& o);

/// A non-negative decimal integer below 1,000,000, as launchers write them;
/// nullopt for anything else ("", "-1", "3 ", "0x2").
std::optional<int> parse_count(const std::string& s);

}  // namespace gpuenv
