// Every job on a node's GPUs, measured and judged round by round from what
// the exporter samples (issue 38; docs/metrics.md "Jobs"): GPU-seconds held,
// energy (a shared GPU's split between its jobs by their utilisation
// samples), SM and pipe activity, memory, the job's CPU, and the verdict of
// decide/verdict.h, the one `gpuenv run` gives, over the job's own
// timeline. Pure: the rounds come in, the jobs' views go out.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "decide/verdict.h"
#include "model/gpu_jobs.h"
#include "model/gpu_reading.h"
#include "model/job.h"

namespace gpuenv::fleet {

struct LedgerOptions {
  /// How long an ended job's series stay (seconds since its last process left).
  double retention_s = 300;
  /// The most jobs tracked at once; a job beyond them is counted in the
  /// "overflow" job (scheduler "unknown") until ended ones are dropped.
  std::size_t max_jobs = 512;
  /// The least evidence a verdict needs: samples and seconds with the job on
  /// its GPUs; below either the job is "too-short".
  int min_samples = 5;
  double min_seconds = 30;
};

/// One round: the readings, each listed process's job (by the device's
/// index in readings.devices and the PID; one absent is "unknown"), and the
/// CPU each job used. `unix_now` stamps a job's first sight.
struct LedgerRound {
  const Readings* readings = nullptr;
  std::map<std::pair<std::size_t, std::uint32_t>, JobOwner> owners;
  std::map<JobKey, JobCpuReading> cpu;
  double unix_now = 0;
};

/// What a job did on one GPU (or MIG device) it holds.
struct JobGpuView {
  std::string uuid;               // "" when NVML gave none
  int gpu = 0;                    // NVML index
  std::optional<int> mig, gpu_instance_id;
  double gpu_seconds = 0;         // held, all told
  std::optional<double> energy_joules;  // all told; nullopt where NVML counts no energy (MIG)
  bool shared = false;            // another job was on it in the last round: energy and utilisation are estimates
  bool present = false;           // on it in the last round
  std::optional<double> utilization;  // 0..1: the GPU's, or (shared) its processes' SM samples
  std::optional<double> sm_active, tensor_active, fp32_active, fp16_active;  // 0..1, GPM, unshared only
  std::uint64_t memory_bytes = 0, memory_peak_bytes = 0;
};

/// A job as the exporter serves it.
struct JobView {
  JobOwner owner;
  std::vector<JobGpuView> gpus;
  std::optional<double> cpu_cores_used, cpu_cores_allowed;
  int processes = 0;            // its processes on the GPUs in the last round
  double start_unix = 0;        // when it was first seen
  bool ended = false;           // no process of it in the last round
  Verdict verdict;              // the main one (decide/verdict.h's first)
};

class JobLedger {
 public:
  explicit JobLedger(LedgerOptions options = {}) : options_(options) {}
  /// Takes one round (readings newer than the last; an older or equal one is ignored).
  void add_round(const LedgerRound& round);
  /// Every job tracked, ordered by scheduler and job.
  std::vector<JobView> jobs() const;
  /// dcgm-exporter's hpc_job: the Slurm jobs on each device in the last
  /// round, by the device's index in the last readings.
  const std::map<std::size_t, std::vector<std::string>>& hpc_jobs() const { return hpc_jobs_; }

 private:
  struct Gpu {
    JobGpuView view;
    JobGpu capacity;
  };
  struct Job {
    JobOwner owner;
    std::map<std::string, Gpu> gpus;  // by device key
    double start_unix = 0, first_t = 0, ended_t = 0;
    bool ended = false;
    int processes = 0;
    Timeline timeline;
    std::optional<double> cpu_used, cpu_allowed, top_cores;
    std::optional<double> last_usage_s;
    std::map<std::uint32_t, double> last_process_s;
    Verdict verdict;
  };
  struct SampleSum;  // one job's figures this round, over its devices

  Job* job_for(const JobOwner& owner, double t, double unix_now);
  void account_device(std::size_t index, const DeviceReading& d, const LedgerRound& round, double dt,
                      std::map<JobKey, SampleSum>* sums);
  void account_cpu(Job* job, const JobCpuReading& cpu, double dt);
  void judge_job(Job* job, const JobSample& sample, double dt);
  void expire(double t);

  LedgerOptions options_;
  std::map<JobKey, Job> jobs_;
  std::map<std::string, double> last_energy_;  // by device key
  std::optional<double> last_t_;
  std::map<std::size_t, std::vector<std::string>> hpc_jobs_;
};

/// The device's key in the ledger: its UUID, else "gpu<N>[/mig<M>]".
std::string device_key(const DeviceReading& d);

}  // namespace gpuenv::fleet
