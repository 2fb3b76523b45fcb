// libFuzzer: any environment (lines of NAME=value) gives a LaunchEnv whose
// engine is the first one recognised, whose malformed variables read as
// unset, and Slurm's tasks-per-node form never crashes or reads past its end.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "decide/launcher_env.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  gpuenv::Options o;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = std::min(text.find('\n', pos), text.size());
    std::string line = text.substr(pos, end - pos);
    size_t eq = line.find('=');
    if (eq != std::string::npos) o.env[line.substr(0, eq)] = line.substr(eq + 1);
    pos = end + 1;
  }
  gpuenv::LaunchEnv l = gpuenv::launch_env(o);
  if (l.seen.empty() != (l.engine == gpuenv::Engine::kNone)) std::abort();
  if (!l.seen.empty() && l.seen[0].engine != l.engine) std::abort();
  if (l.seen.empty() != gpuenv::launch_summary(l).empty()) std::abort();
  if (l.malformed.count(l.local_rank_var) && l.local_rank) std::abort();
  for (const auto* v : {&l.rank, &l.local_rank, &l.node_rank})
    if (*v && **v < 0) std::abort();
  for (const auto* v : {&l.local_world_size, &l.world_size, &l.nnodes})
    if (*v && (**v < 1 || **v > gpuenv::kMaxLaunchCount)) std::abort();
  for (int node = -1; node < 4; ++node)
    if (auto n = gpuenv::slurm_tasks_on_node(text, node); n && *n < 1) std::abort();
  return 0;
}
