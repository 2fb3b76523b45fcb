// A job that `gpuenv run` watched: what it ran, where, how it ended, and a
// downsampled timeline of its GPU and CPU use. Pure data; sense/nvml/job_watch
// fills it, store/ keeps it, decide/verdict judges it, act/job_report shows it.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpuenv {

/// What one sample measures. GPU figures are summed (memory, PCIe, power)
/// or averaged (utilisation, clock) over the GPUs the job was watched on.
enum Metric : int {
  kUtilPct,         // nvmlDeviceGetUtilizationRates .gpu, %
  kMemMib,          // the job's processes' GPU memory on the watched GPUs, MiB
  kPowerW,          // board power, W
  kSmMhz,           // SM clock, MHz
  kPcieRxMBs,       // PCIe bytes the GPU received (host to device), MB/s
  kPcieTxMBs,       // PCIe bytes the GPU sent (device to host), MB/s
  kThermal,         // 1 when a thermal / hardware slowdown reason was set, else 0
  kPowerCap,        // 1 when the power-cap reason was set, else 0
  kCpuCores,        // CPU time of the job's whole process tree, in cores
  kTopCpuCores,     // CPU time of its busiest single process, in cores
  kWorkers,         // processes in the tree besides the command itself
  kOtherGpuMemMib,  // the job's GPU memory on GPUs it was not watched on, MiB
  // NVML GPM (Hopper and newer; absent before, and on MIG devices), % of the
  // interval, averaged over the watched GPUs (sense/nvml/nvml_gpm.h):
  kSmActivePct,      // SMs busy (NVML_GPM_METRIC_SM_UTIL)
  kTensorActivePct,  // any tensor-pipe instruction (ANY_TENSOR_UTIL)
  kFp32ActivePct,    // non-tensor FP32 math (FP32_UTIL)
  kFp16ActivePct,    // non-tensor FP16 math (FP16_UTIL)
  kDramActivePct,    // DRAM bandwidth of the peak (DRAM_BW_UTIL)
  kSmOccupancyPct,   // warps resident of the maximum (SM_OCCUPANCY)
  kMetricCount
};

/// "util_pct", "mem_mib", ...: the names in JSON.
const char* metric_name(Metric m);

/// One raw sample; unknown (not supported, not read) stays nullopt.
struct JobSample {
  double t = 0;  // seconds since the job started
  std::array<std::optional<double>, kMetricCount> v{};
  std::optional<std::uint64_t> clock_events;  // the NVML mask, OR over the GPUs
};

/// min / mean / max of one metric over the samples of a bucket that had it.
struct Stat {
  int n = 0;
  double min = 0, mean = 0, max = 0;
  void add(double x);
  void merge(const Stat& o);
  friend bool operator==(const Stat&, const Stat&) = default;
};

/// A time bucket of the timeline.
struct TimelinePoint {
  double t0 = 0, t1 = 0;  // first and last sample time in it
  int samples = 0;
  std::array<Stat, kMetricCount> s{};
  std::uint64_t clock_events = 0;  // OR of every mask seen
  friend bool operator==(const TimelinePoint&, const TimelinePoint&) = default;
};

inline constexpr std::size_t kMaxTimelinePoints = 1000;
/// The most samples one stored point (and one Stat) may count: the whole
/// timeline's then still fits an int (2,147,483 per point: 68 years at 1 s).
inline constexpr int kMaxPointSamples = 2147483647 / int(kMaxTimelinePoints);
/// The longest a stored job, or a time within it, may be: 1e9 s (31 years).
inline constexpr double kMaxJobSeconds = 1e9;
/// The largest exit status a job can have: waitpid's 0-255 (128 + the signal
/// for a job a signal ended; 126/127 for one that never started).
inline constexpr int kMaxExitStatus = 255;

/// The downsampled timeline: at most kMaxTimelinePoints buckets, each of
/// `width` consecutive samples (the last may hold fewer); when full, pairs
/// of neighbours merge and the width doubles. Memory stays bounded however
/// long the job runs.
class Timeline {
 public:
  void add(const JobSample& s);
  const std::vector<TimelinePoint>& points() const { return points_; }
  int width() const { return width_; }
  /// Every metric over the whole job.
  std::array<Stat, kMetricCount> totals() const;
  /// Restores a stored timeline (job_json.h).
  static Timeline from_points(std::vector<TimelinePoint> points, int width);

 private:
  void halve();
  std::vector<TimelinePoint> points_;
  int width_ = 1;
};

/// A GPU the job was watched on, with the capacities verdicts compare to.
struct JobGpu {
  std::string uuid;
  std::optional<std::string> name;
  std::optional<double> memory_total_mib;
  std::optional<int> pcie_gen, pcie_width;  // current link
  std::optional<double> max_sm_mhz, power_limit_w;
  friend bool operator==(const JobGpu&, const JobGpu&) = default;
};

/// What the verdicts need besides the timeline.
struct JobContext {
  std::vector<JobGpu> gpus;
  std::optional<int> cpus_per_gpu;  // CPUs this process may use per GPU it drives
  double interval_s = 1.0;          // the sampling interval
  std::string unwatched;            // why the GPUs were not sampled ("" when they were)
  /// What `gpuenv bench` measured on the (first) watched GPU before the run:
  /// GEMM TFLOP/s at the largest size, by precision ("fp32", "tf32", "bf16");
  /// empty when never measured. The fp32-on-cuda-cores verdict quotes them.
  std::map<std::string, double> gemm_tflops;
  // --tune=+precision (docs/precision.md): "bf16" when the job ran under it.
  std::string precision;
  // For the feedback that may suggest it: the job's GPUs have bf16 tensor
  // cores, and this machine's measured bf16 GEMM gain (decide/run/precision_tune.h).
  bool bf16 = false;
  std::optional<double> bf16_gain;
  std::string bf16_gain_basis;
  // --tune: the DataLoader settings it asked for that the script passed itself, with the
  // script's values ("num_workers=4,pin_memory=True"), as the Python hook reported them
  // (issue 40). Job::tuned holds those it applied.
  std::string script_settings;
  friend bool operator==(const JobContext&, const JobContext&) = default;
};

/// The job's own speed, as the Python start-up hook measured it
/// (python/gpuenv_speed.py; docs/feedback.md): unknown stays nullopt.
struct JobSpeed {
  long long steps = 0, batches = 0;          // optimizer steps, DataLoader batches
  std::optional<double> steps_per_s;         // between the first and the last step
  std::optional<double> batches_per_s;       // between the first and the last batch
  std::optional<double> data_wait_share;     // of that time, spent waiting for the next batch (0-1)
  std::optional<double> first_step_s;        // from the job's start to its first step
  std::optional<double> exit_tail_s;         // from its last step (or batch) to its exit
  friend bool operator==(const JobSpeed&, const JobSpeed&) = default;
};

/// The most a peak of GPU memory may read: 1 PiB (beyond it, no reading).
inline constexpr std::int64_t kMaxPeakMemoryBytes = std::int64_t(1) << 50;

/// The job's peak GPU memory on one GPU, the largest over its GPUs:
/// torch.cuda.max_memory_allocated() as the Python hook read it ("torch"),
/// else the memory NVML lists for the job's processes ("nvml": the CUDA
/// context and the allocator's cached blocks too). docs/feedback.md.
struct JobPeakMemory {
  std::int64_t bytes = 0;  // 0 to kMaxPeakMemoryBytes
  std::string source;      // "torch" | "nvml"
  friend bool operator==(const JobPeakMemory&, const JobPeakMemory&) = default;
};

/// `gpuenv plan-memory FLAGS -- CMD`'s plan, kept against CMD's fingerprint
/// (the one `gpuenv run -- CMD` gives in the same directory): what report
/// compares the job's measured peak with.
struct PlannedPeak {
  std::string command_fp;
  double peak_bytes = 0;   // the plan's peak per GPU (peak_bytes_per_gpu), above 0
  std::string gpu;         // the GPU it was planned for ("" when none was visible)
  std::string flags;       // plan-memory's flags, as given
  std::string planned_at;  // RFC 3339 UTC
  friend bool operator==(const PlannedPeak&, const PlannedPeak&) = default;
};
/// The largest peak plan-memory plans (4 EiB, beyond exact arithmetic): a
/// stored plan above it is no record of gpuenv's.
inline constexpr double kMaxPlannedPeakBytes = 0x1p62;

/// The record of one watched job (one rank).
/// The verdict a job got when it ended (decide/verdict.h's first: what
/// mattered most), as the store keeps it with the job.
struct JobVerdict {
  std::string name, evidence, fix;
  friend bool operator==(const JobVerdict&, const JobVerdict&) = default;
};

struct Job {
  std::int64_t id = 0;
  std::vector<std::string> argv;
  std::string cwd;
  std::string command_fp;  // of argv
  std::string script_path, script_fp;  // the script file argv names, its content's fingerprint
  std::string machine_fp;
  std::string plan_json;
  std::string started_at;  // RFC 3339 UTC
  double duration_s = 0;
  int exit_code = 0;
  std::optional<int> rank, local_rank;
  std::string hostname, gpuenv_version;
  JobContext context;
  Timeline timeline;
  std::optional<JobSpeed> speed;  // nullopt: no Python hook reported (not Python, or no torch)
  std::string tuned;              // the DataLoader settings this run applied ("num_workers=15,..."; "": none);
                                  // the hook's report where it gave one, else those --tune handed it
  std::optional<JobPeakMemory> peak_memory;  // nullopt: neither torch nor NVML said
  std::optional<JobVerdict> verdict;         // nullopt: a row from before it was stored (judge it)
};

}  // namespace gpuenv
