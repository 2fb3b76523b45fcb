// One job's use of the fleet from the exporters' per-job series (issue 38,
// docs/cluster.md "Reporting a job from Prometheus"), as `gpuenv report
// --job ID --prometheus URL` shows it: pure, over what Prometheus answered
// (range queries every `step`), so a table of answers tests every rule.
//
// The figures are read as Prometheus keeps them: a point of a range query
// holds the newest sample at or before it (for up to 5 minutes), so the
// counters' last points are their last samples, and a gauge's mean over the
// points from a GPU's first sample to its last is its time-weighted mean.
// timestamp() of gpuenv_job_gpu_seconds_total and of gpuenv_job_verdict
// gives the samples' own times: each GPU's first and last sample, and
// when each verdict was said.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpuenv::fleet {

struct TimePoint {
  double t = 0;  // unix seconds
  double v = 0;
  friend bool operator==(const TimePoint&, const TimePoint&) = default;
};

/// One series as Prometheus answered it: its labels (the exporter's `job`
/// as `job`, never exported_job) and its points in time order.
struct JobSeries {
  std::map<std::string, std::string> labels;
  std::vector<TimePoint> points;
};

/// What Prometheus answered for one job. Per GPU series carry the node (see
/// node_of), gpu, UUID (and GPU_I_ID on a MIG device); per job series the node.
struct JobAnswers {
  std::string job;
  double window_start = 0, window_end = 0;  // the window asked (--since, --end)
  double from = 0, step = 15;               // the range queries' first point, and their step
  bool end_is_now = true;                   // no --end: the job may still run
  // Per GPU (gpuenv_job_*): sample times (timestamp() of gpu_seconds_total),
  // then the series themselves.
  std::vector<JobSeries> gpu_sample_times, gpu_seconds, energy, shared, utilization, sm_active, tensor_active,
      fp32_active, fp16_active, memory_used, memory_peak;
  // Per job, on each node: the CPU, the processes, when the exporter first saw
  // it, and the verdicts' sample times (timestamp() of gpuenv_job_verdict,
  // whose labels say verdict and fix).
  std::vector<JobSeries> cpu_used, cpu_allowed, processes, start_time, verdict_sample_times;
};

/// One GPU (or MIG device) the job held.
struct GpuUse {
  std::string node, gpu, uuid, mig;  // node_of, gpu (NVML index), UUID, GPU_I_ID ("" not MIG)
  double first = 0, last = 0;        // its first and last sample (unix seconds)
  double held_s = 0;                 // gpuenv_job_gpu_seconds_total's increase
  std::optional<double> energy_j;    // gpuenv_job_energy_joules_total's increase
  bool shared = false;               // gpuenv_job_gpu_shared was 1: energy and utilisation are estimates
  std::optional<double> utilization, utilization_max;  // 0..1; mean and highest point
  std::optional<double> sm_active, tensor_active, fp32_active, fp16_active;  // means 0..1 (Hopper and later)
  std::optional<double> memory_peak_bytes;
};

/// The job's CPU on one node.
struct NodeCpu {
  std::string node;
  std::optional<double> cores_used;     // mean over the job's life
  std::optional<double> cores_allowed;  // the last
  std::optional<double> processes;      // the most at once
};

/// A verdict that held from `from` to `to` (the next verdict's first
/// sample, or this one's last) on one node.
struct VerdictSpan {
  std::string node;
  double from = 0, to = 0;
  std::string verdict, fix;
  friend bool operator==(const VerdictSpan&, const VerdictSpan&) = default;
};

struct JobSummary {
  std::string job;
  std::string scheduler, user, ns, pod, container, command;  // as the labels say ("" absent)
  std::vector<std::string> nodes;                             // sorted
  std::vector<GpuUse> gpus;                                   // by node, GPU, MIG device
  /// The earliest gpuenv_job_start_timestamp_seconds (when an exporter first
  /// saw it), else its first sample; the end is its last sample.
  double start = 0, end = 0;
  bool began_before_window = false;  // figures cover only the window
  bool running = false;              // no --end and a sample within the last 5 minutes
  double gpu_hours = 0;
  std::optional<double> energy_j;  // nullopt: no GPU had an energy series
  bool energy_estimate = false;    // a GPU with energy was shared
  std::vector<NodeCpu> cpu;
  std::vector<VerdictSpan> verdicts;  // by node, then time
  /// The verdict that held longest, too-short left out unless it is the
  /// only one; "" when there is none; its fix from its latest span.
  std::string main_verdict, main_fix;
  double main_verdict_s = 0;
  std::vector<std::string> notes;  // what jobstats would say, one sentence each
};

/// The job's summary; nullopt when the answers hold no GPU sample of it.
std::optional<JobSummary> summarize_job(const JobAnswers& answers);

/// A counter's increase over `points`: rises summed, a fall taken as a reset
/// (the new value counts whole), and the first value too when `from_zero`
/// (the series began in the window, so its counter began at 0). A series
/// began in the window when the job was first seen inside it
/// (gpuenv_job_start_timestamp_seconds), when it first shows after the
/// queries' first point, or when the queries began a step or more after the
/// window (the job began later); one at the first point of queries that began
/// with the window is taken to be older: its first value would count time
/// before the window, and leaving it out loses at most a step.
double counter_increase(const std::vector<TimePoint>& points, bool from_zero);


/// Each node's verdict spans from timestamp() of gpuenv_job_verdict: at each
/// point, the verdict whose sample is newest; runs of one verdict merged.
std::vector<VerdictSpan> verdict_spans(const std::vector<JobSeries>& verdict_sample_times);

/// The verdict that held longest over all nodes (too-short only when there
/// is no other; a tie goes to the one said last), with its latest fix.
void main_verdict(const std::vector<VerdictSpan>& spans, std::string* verdict, std::string* fix, double* seconds);

/// The node a series came from: its hostname label (export's default, as
/// dcgm-exporter 4.x), else Hostname (--hostname-label Hostname, and exporters
/// before the rename), else node, else instance.
std::string node_of(const std::map<std::string, std::string>& labels);

}  // namespace gpuenv::fleet
