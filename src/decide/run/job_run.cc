#include "decide/run/job_run.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "decide/launcher_env.h"
#include "decide/visible.h"

namespace gpuenv {

std::vector<std::string> job_gpus(const Machine& m, const Options& o) {
  // What the job runs on: each visible whole GPU, and the one MIG device CUDA
  // gives a process (the first visible), by its own MIG- UUID.
  std::vector<std::string> uuids;
  bool mig_taken = false;
  for (const VisibleDevice& d : visible_devices(m, o).devices) {
    if (d.mig) {
      if (!std::exchange(mig_taken, true)) uuids.push_back(d.mig->uuid);
    } else if (d.gpu && d.gpu->uuid && std::find(uuids.begin(), uuids.end(), *d.gpu->uuid) == uuids.end()) {
      uuids.push_back(*d.gpu->uuid);
    }
  }
  LaunchEnv launch = launch_env(o);
  if (launch.local_rank && uuids.size() > 1 && std::size_t(*launch.local_rank) < uuids.size())
    uuids = {uuids[*launch.local_rank]};
  return uuids;
}

std::optional<int> cpus_per_gpu(const Machine& m, const Plan& plan, const Options& o) {
  if (plan.binding && !plan.binding->cpus.empty()) return int(plan.binding->cpus.size());
  if (!m.host.usable_cpus) return std::nullopt;
  return std::max(1, *m.host.usable_cpus / launch_env(o).local_world_size.value_or(1));
}

std::string script_of(const std::vector<std::string>& argv, const std::function<bool(const std::string&)>& is_file) {
  auto file = [&](const std::string& p) { return !p.empty() && is_file(p); };
  for (std::size_t i = 1; i < argv.size(); ++i)
    if (file(argv[i])) return argv[i];
  return !argv.empty() && argv[0].find('/') != std::string::npos && file(argv[0]) ? argv[0] : "";
}

bool watch_enabled(bool no_watch, const std::string& watch_var) {
  return !no_watch && (watch_var.empty() ? std::string("1") : watch_var) != "0";
}

std::chrono::milliseconds watch_interval(const std::string& interval_ms) {
  int ms = std::atoi(interval_ms.empty() ? "1000" : interval_ms.c_str());
  return std::chrono::milliseconds(ms >= 50 && ms <= 60000 ? ms : 1000);
}

}  // namespace gpuenv
