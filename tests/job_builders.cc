#include "job_builders.h"

#include "store/fingerprint.h"

namespace gpuenv::testing {

Job input_bound_job(const std::vector<std::string>& argv, const std::string& cwd, double duration_s) {
  Job j;
  j.argv = argv;
  j.cwd = cwd;
  j.command_fp = store::command_fingerprint(argv, cwd);
  j.started_at = "2025-01-01T00:00:00Z";
  j.duration_s = duration_s;
  j.plan_json = "{}";
  j.context.cpus_per_gpu = 16;
  j.context.gpus.push_back({"GPU-a", "NVIDIA H200", 143771.0, 5, 16, 1980.0, 700.0});
  for (int i = 0; i < 30; ++i) {
    JobSample s;
    s.t = i;
    s.v[kUtilPct] = 8, s.v[kMemMib] = 7000, s.v[kTopCpuCores] = 1.0, s.v[kCpuCores] = 1.0, s.v[kWorkers] = 0;
    j.timeline.add(s);
  }
  return j;
}

}  // namespace gpuenv::testing
