// The jobs' round with a fake /proc: NVML's PIDs told, attributed by the
// real rules, each job's CPU read once, and the tracker's snapshot and lines.
#include "flow/export_jobs.h"

#include <gtest/gtest.h>

namespace gpuenv::flow {
namespace {

class FakeProcesses : public ProcessSource {
 public:
  std::map<std::uint32_t, ProcessFacts> known;
  std::map<JobKey, int> cpu_reads;
  std::string hpc_error;
  HpcJobMap hpc;

  std::vector<ProcessFacts> facts(const std::vector<std::uint32_t>& pids) override {
    std::vector<ProcessFacts> out;
    for (std::uint32_t pid : pids) {
      auto it = known.find(pid);
      ProcessFacts f;
      f.pid = pid;
      out.push_back(it == known.end() ? f : it->second);
    }
    return out;
  }
  JobCpuReading cpu(const JobOwner& owner) override {
    ++cpu_reads[job_key(owner)];
    return {10.0 * cpu_reads[job_key(owner)], 4, {}};
  }
  bool hpc_jobs(HpcJobMap* out, std::string* err) override {
    *out = hpc;
    *err = hpc_error;
    return hpc_error.empty();
  }
};

ProcessFacts in_slurm_job(std::uint32_t pid, const char* job) {
  ProcessFacts f;
  f.pid = pid;
  f.found = true;
  f.uid = 1000;
  f.user = "alice";
  f.cgroup = std::string("/system.slice/slurmstepd.scope/job_") + job + "/step_0/user/task_0";
  f.cgroup_version = 2;
  f.root_pid = pid;
  return f;
}

Readings two_gpus(double t) {
  Readings r;
  r.sampled_at = t;
  for (int i = 0; i < 2; ++i) {
    DeviceReading d;
    d.gpu = i;
    d.uuid = "GPU-" + std::to_string(i);
    d.utilization_ratio = 0.5;
    d.processes = std::vector<GpuProcess>{};
    r.devices.push_back(d);
  }
  r.devices[0].processes->push_back({100, 1 << 20, std::nullopt});
  r.devices[1].processes->push_back({101, 1 << 20, std::nullopt});
  r.devices[1].processes->push_back({555, 1 << 20, std::nullopt});  // not in this /proc
  return r;
}

TEST(ExportJobs, ProcessesAreToldAttributedAndEachJobsCpuReadOnce) {
  FakeProcesses procs;
  procs.known = {{100, in_slurm_job(100, "77")}, {101, in_slurm_job(101, "77")}};
  fleet::JobLedger ledger;
  Readings r = two_gpus(10);
  JobRoundNotes notes = track_jobs(r, PodDevices(), &procs, 1.7e9, &ledger);
  EXPECT_EQ(notes.pids, 3u);
  EXPECT_EQ(notes.pids_not_in_proc, 1u);
  EXPECT_EQ(procs.cpu_reads[JobKey("slurm", "77")], 1);
  EXPECT_EQ(procs.cpu_reads.size(), 1u) << "the unknown job has no CPU to read";
  std::vector<fleet::JobView> jobs = ledger.jobs();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].owner.job, "77");
  EXPECT_EQ(jobs[0].owner.user, "alice");
  EXPECT_EQ(jobs[0].gpus.size(), 2u);
  EXPECT_DOUBLE_EQ(*jobs[0].cpu_cores_allowed, 4);
  EXPECT_EQ(jobs[1].owner.job, "unknown");
  EXPECT_EQ(ledger.hpc_jobs().at(0), std::vector<std::string>{"77"});
}

// dcgm-exporter's mapping directory tells the job of a process /proc cannot place.
TEST(ExportJobs, TheMappingDirectoryTellsWhatProcCannot) {
  FakeProcesses procs;
  procs.hpc = {{"1", {"4242"}}};
  fleet::JobLedger ledger;
  track_jobs(two_gpus(10), PodDevices(), &procs, 1.7e9, &ledger);
  std::vector<fleet::JobView> jobs = ledger.jobs();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].owner.job, "4242");
  EXPECT_EQ(jobs[0].owner.source, "hpc-job-mapping");
  EXPECT_EQ(jobs[0].gpus.size(), 1u);
}

// The tracker takes each new NVML round once, and says once that /proc is not the host's.
TEST(ExportJobs, TrackerTakesEachNewRoundOnceAndSaysWhatIsMissing) {
  FakeProcesses procs;  // knows no PID: a container without the host's /proc
  procs.hpc_error = "cannot list /run/dcgm-job-map: No such file or directory";
  std::vector<std::string> lines;
  JobTracker tracker(&procs, {}, [] { return 1.7e9; },
                     [&](Severity, const std::string&, const std::string& text, const nlohmann::ordered_json&) {
                       lines.push_back(text);
                     });
  auto first = tracker.update(two_gpus(10), PodDevices());
  ASSERT_EQ(first->jobs.size(), 1u);
  EXPECT_EQ(first->jobs[0].owner.job, "unknown");
  EXPECT_EQ(tracker.update(two_gpus(10), PodDevices()), first) << "the same round again is not taken again";
  auto second = tracker.update(two_gpus(15), PodDevices());
  EXPECT_EQ(second->jobs[0].gpus[0].gpu_seconds, 5);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("none of the 3 processes"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("--proc-root"), std::string::npos);
  EXPECT_NE(lines[1].find("--hpc-job-mapping-dir: cannot list"), std::string::npos) << lines[1];
}

}  // namespace
}  // namespace gpuenv::flow
