// The jobs `gpuenv export` sees on its GPUs without wrapping them (issue 38;
// docs/metrics.md "Jobs"): every interval, the PIDs of the newest NVML round
// are told from the host's /proc (sense/host/process_facts.h), each is given
// its job (decide/fleet/attribute.h), each job's CPU is read from its
// cgroup, and the ledger (decide/fleet/job_ledger.h) measures and judges
// them; a scrape takes the newest snapshot without waiting.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "act/render/gpu_metrics.h"
#include "act/log.h"
#include "decide/fleet/job_ledger.h"
#include "model/gpu_jobs.h"
#include "model/gpu_reading.h"
#include "model/kubelet/pod_devices.h"
#include "sense/host/process_facts.h"

namespace gpuenv::flow {

/// Where the jobs are told from: the host (HostProcesses), fakes in a test.
class ProcessSource {
 public:
  virtual ~ProcessSource() = default;
  virtual std::vector<ProcessFacts> facts(const std::vector<std::uint32_t>& pids) = 0;
  virtual JobCpuReading cpu(const JobOwner& owner) = 0;
  /// dcgm-exporter's mapping directory, read; true and empty when none is
  /// configured; false with *err when it cannot be read.
  virtual bool hpc_jobs(HpcJobMap* out, std::string* err) = 0;
};

/// The host's /proc and cgroup tree, and the mapping directory (when set).
class HostProcesses : public ProcessSource {
 public:
  HostProcesses(ProcessReadOptions options, std::string hpc_job_mapping_dir)
      : reader_(std::move(options)), hpc_dir_(std::move(hpc_job_mapping_dir)) {}
  std::vector<ProcessFacts> facts(const std::vector<std::uint32_t>& pids) override;
  JobCpuReading cpu(const JobOwner& owner) override;
  bool hpc_jobs(HpcJobMap* out, std::string* err) override;

 private:
  ProcessReader reader_;
  std::string hpc_dir_;
};

/// What a scrape serves of the jobs.
struct JobsSnapshot {
  std::vector<fleet::JobView> jobs;
  HpcJobs hpc_jobs;
};

/// What one round learnt besides the ledger's figures, for the log.
struct JobRoundNotes {
  std::size_t pids = 0, pids_not_in_proc = 0;  // NVML's PIDs, and those /proc did not have
  std::string hpc_error;                       // the mapping directory could not be read
};

/// One round: the PIDs of `r` told from `source`, attributed, their jobs'
/// CPU read, all added to `ledger`.
JobRoundNotes track_jobs(const Readings& r, const PodDevices& pods, ProcessSource* source, double unix_now,
                         fleet::JobLedger* ledger);

/// The jobs over the exporter's rounds: track_jobs on each new NVML round,
/// and what its lines say (each once).
class JobTracker {
 public:
  JobTracker(ProcessSource* source, fleet::LedgerOptions options, std::function<double()> unix_clock,
             MessageSink log)
      : source_(source), ledger_(options), unix_clock_(std::move(unix_clock)), log_(std::move(log)) {}
  /// The jobs after a round over `r` (a round taken before is not taken again).
  std::shared_ptr<const JobsSnapshot> update(const Readings& r, const PodDevices& pods);

 private:
  void say(const JobRoundNotes& notes);

  ProcessSource* source_;
  fleet::JobLedger ledger_;
  std::function<double()> unix_clock_;
  MessageSink log_;
  double last_sampled_at_ = -1;
  bool said_no_proc_ = false;
  std::string said_hpc_error_;
  std::shared_ptr<const JobsSnapshot> latest_ = std::make_shared<JobsSnapshot>();
};

/// Seconds since the Unix epoch, now.
double unix_seconds();

}  // namespace gpuenv::flow
