#include "act/render/job_metrics.h"

#include <functional>
#include <optional>

namespace gpuenv {
namespace {

using prometheus::MetricFamily;
using prometheus::Type;

void add_if(prometheus::Labels* l, const char* name, const std::string& value) {
  if (!value.empty()) l->emplace_back(name, value);
}

prometheus::Labels gpu_labels(const prometheus::Labels& job, const fleet::JobGpuView& g) {
  prometheus::Labels l = job;
  l.emplace_back("gpu", std::to_string(g.gpu));
  add_if(&l, "UUID", g.uuid);
  if (g.mig && g.gpu_instance_id) l.emplace_back("GPU_I_ID", std::to_string(*g.gpu_instance_id));
  return l;
}

struct GpuSeries {
  const char* name;
  Type type;
  const char* help;
  std::function<std::optional<double>(const fleet::JobGpuView&)> get;
};

const std::vector<GpuSeries>& gpu_series() {
  using V = fleet::JobGpuView;
  static const std::vector<GpuSeries> kSeries = {
      {"gpuenv_job_gpu_seconds_total", Type::kCounter, "Seconds the job has held this GPU",
       [](const V& g) { return std::optional<double>(g.gpu_seconds); }},
      {"gpuenv_job_energy_joules_total", Type::kCounter,
       "Energy the GPU used for the job, J (split by utilisation samples where shared: an estimate)",
       [](const V& g) { return g.energy_joules; }},
      {"gpuenv_job_gpu_shared", Type::kGauge,
       "1 when another job was on this GPU in the last round (energy and utilisation are then estimates)",
       [](const V& g) { return std::optional<double>(g.shared ? 1 : 0); }},
      {"gpuenv_job_gpu_utilization_ratio", Type::kGauge,
       "The job's GPU utilisation in the last round (the GPU's; where shared, its processes' SM samples)",
       [](const V& g) { return g.present ? g.utilization : std::nullopt; }},
      {"gpuenv_job_sm_active_ratio", Type::kGauge, "SMs busy for the job (NVML GPM; unshared GPUs)",
       [](const V& g) { return g.present ? g.sm_active : std::nullopt; }},
      {"gpuenv_job_tensor_active_ratio", Type::kGauge, "Tensor pipe active for the job (NVML GPM; unshared GPUs)",
       [](const V& g) { return g.present ? g.tensor_active : std::nullopt; }},
      {"gpuenv_job_fp32_active_ratio", Type::kGauge, "FP32 pipe active for the job (NVML GPM; unshared GPUs)",
       [](const V& g) { return g.present ? g.fp32_active : std::nullopt; }},
      {"gpuenv_job_fp16_active_ratio", Type::kGauge, "FP16 pipe active for the job (NVML GPM; unshared GPUs)",
       [](const V& g) { return g.present ? g.fp16_active : std::nullopt; }},
      {"gpuenv_job_memory_used_bytes", Type::kGauge, "GPU memory the job's processes hold on this GPU",
       [](const V& g) { return std::optional<double>(g.present ? double(g.memory_bytes) : 0); }},
      {"gpuenv_job_memory_peak_bytes", Type::kGauge, "The most GPU memory the job's processes held on this GPU",
       [](const V& g) { return std::optional<double>(double(g.memory_peak_bytes)); }},
  };
  return kSeries;
}

struct JobSeries {
  const char* name;
  const char* help;
  std::function<std::optional<double>(const fleet::JobView&)> get;
};

const std::vector<JobSeries>& job_series() {
  using V = fleet::JobView;
  static const std::vector<JobSeries> kSeries = {
      {"gpuenv_job_cpu_cores_used", "CPU cores the job used in the last round (its cgroup, else its process tree)",
       [](const V& j) { return j.ended ? std::nullopt : j.cpu_cores_used; }},
      {"gpuenv_job_cpu_cores_allowed", "CPU cores the job may use (cpu.max, else its cpuset)",
       [](const V& j) { return j.cpu_cores_allowed; }},
      {"gpuenv_job_processes", "The job's processes on the GPUs in the last round",
       [](const V& j) { return std::optional<double>(j.processes); }},
      {"gpuenv_job_start_timestamp_seconds", "When the exporter first saw the job, Unix time",
       [](const V& j) { return std::optional<double>(j.start_unix); }},
  };
  return kSeries;
}

}  // namespace

prometheus::Labels job_labels(const JobOwner& o, const ExporterInfo& info) {
  prometheus::Labels l{{"job", o.job}};
  add_if(&l, "user", o.user);
  l.emplace_back("scheduler", o.scheduler);
  add_if(&l, "namespace", o.ns);
  add_if(&l, "pod", o.pod);
  add_if(&l, "container", o.container);
  add_if(&l, "command", o.command);
  add_if(&l, info.hostname_label.c_str(), info.hostname);
  return l;
}

std::vector<MetricFamily> job_metric_families(const std::vector<fleet::JobView>& jobs, const ExporterInfo& info) {
  std::vector<MetricFamily> out;
  std::vector<prometheus::Labels> labels;
  for (const auto& j : jobs) labels.push_back(job_labels(j.owner, info));
  for (const GpuSeries& s : gpu_series()) {
    MetricFamily f{s.name, s.type, s.help, {}};
    for (std::size_t i = 0; i < jobs.size(); ++i)
      for (const auto& g : jobs[i].gpus)
        if (auto v = s.get(g)) f.samples.push_back({gpu_labels(labels[i], g), *v});
    out.push_back(std::move(f));
  }
  for (const JobSeries& s : job_series()) {
    MetricFamily f{s.name, Type::kGauge, s.help, {}};
    for (std::size_t i = 0; i < jobs.size(); ++i)
      if (auto v = s.get(jobs[i])) f.samples.push_back({labels[i], *v});
    out.push_back(std::move(f));
  }
  MetricFamily verdicts{"gpuenv_job_verdict", Type::kGauge,
                        "The job's main verdict now, and its fix (1); too-short until there is evidence enough", {}};
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    prometheus::Labels l = labels[i];
    l.emplace_back("verdict", jobs[i].verdict.name.empty() ? "too-short" : jobs[i].verdict.name);
    l.emplace_back("fix", jobs[i].verdict.fix);
    verdicts.samples.push_back({std::move(l), 1});
  }
  out.push_back(std::move(verdicts));
  return out;
}

}  // namespace gpuenv
