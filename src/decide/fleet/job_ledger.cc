#include "decide/fleet/job_ledger.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "model/hardware/clock_events.h"
#include "sys/text.h"

namespace gpuenv::fleet {
namespace {

// Metrics a job's sample sums over its GPUs; the rest are averaged.
bool summed(Metric m) { return m == kMemMib || m == kPowerW; }

std::optional<double> pct(std::optional<double> ratio) {
  return ratio ? std::optional<double>(*ratio * 100) : std::nullopt;
}

JobOwner unknown_owner(const char* job) {
  JobOwner o;
  o.job = job;
  return o;
}


// A whole GPU whose MIG devices follow it: its processes are theirs.
bool has_mig_children(const Readings& r, std::size_t i) {
  return !r.devices[i].mig && i + 1 < r.devices.size() && r.devices[i + 1].mig &&
         r.devices[i + 1].gpu == r.devices[i].gpu;
}

// What one job has of one device this round.
struct Share {
  const JobOwner* owner = nullptr;
  int processes = 0;
  std::uint64_t memory = 0;
  double sm = 0;
  bool sm_known = true;
};

// The device's processes gathered by job (an unplaced one is the "unknown" job's).
std::map<JobKey, Share> shares_of(std::size_t index, const DeviceReading& d, const LedgerRound& round) {
  static const JobOwner unknown = unknown_owner("unknown");
  std::map<JobKey, Share> shares;
  for (const GpuProcess& p : *d.processes) {
    auto o = round.owners.find({index, p.pid});
    const JobOwner& owner = o == round.owners.end() ? unknown : o->second;
    Share& s = shares[job_key(owner)];
    s.owner = &owner;
    ++s.processes;
    s.memory += p.used_memory_bytes.value_or(0);
    s.sm += p.sm_ratio.value_or(0);
    s.sm_known = s.sm_known && p.sm_ratio.has_value();
  }
  return shares;
}

// Each job's part of the device's energy: by the jobs' SM samples where every
// one has them and they sum above 0, else evenly.
std::map<JobKey, double> weights_of(const std::map<JobKey, Share>& shares) {
  double sm_total = 0;
  bool by_sm = shares.size() > 1;
  for (const auto& [k, s] : shares) sm_total += s.sm, by_sm = by_sm && s.sm_known;
  by_sm = by_sm && sm_total > 0;
  std::map<JobKey, double> w;
  for (const auto& [k, s] : shares) w[k] = by_sm ? s.sm / sm_total : 1.0 / double(shares.size());
  return w;
}

// The job's view of the device this round: alone there, the device's own
// figures; shared, only what its processes' samples say.
void update_view(const DeviceReading& d, const Share& s, bool shared, double dt, std::optional<double> energy,
                 double weight, JobGpuView* v) {
  v->uuid = d.uuid.value_or("");
  v->gpu = d.gpu;
  v->mig = d.mig;
  v->gpu_instance_id = d.gpu_instance_id;
  v->gpu_seconds += dt;
  if (d.energy_joules) v->energy_joules = v->energy_joules.value_or(0) + energy.value_or(0) * weight;
  v->present = true;
  v->shared = shared;
  // Alone there: the device's utilisation, NVML's, else (a MIG device, of which NVML gives
  // none) GPM's graphics-engine activity, as gpuenv run's watcher takes it.
  std::optional<double> alone = d.utilization_ratio ? d.utilization_ratio : d.gpm_gr_engine_active;
  v->utilization = shared ? (s.sm_known ? std::optional<double>(s.sm) : std::nullopt) : alone;
  v->sm_active = shared ? std::nullopt : d.gpm_sm_active;
  v->tensor_active = shared ? std::nullopt : d.gpm_tensor_active;
  v->fp32_active = shared ? std::nullopt : d.gpm_fp32_active;
  v->fp16_active = shared ? std::nullopt : d.gpm_fp16_active;
  v->memory_bytes = s.memory;
  v->memory_peak_bytes = std::max(v->memory_peak_bytes, s.memory);
}

JobGpu capacity_of(const DeviceReading& d) {
  JobGpu g;
  g.uuid = d.uuid.value_or("");
  g.name = d.name;
  if (d.memory_total_bytes) g.memory_total_mib = double(*d.memory_total_bytes) / (1 << 20);
  g.pcie_gen = d.pcie_link_generation;
  g.pcie_width = d.pcie_link_width;
  return g;
}

}  // namespace

std::string device_key(const DeviceReading& d) {
  if (d.uuid && !d.uuid->empty()) return *d.uuid;
  return "gpu" + std::to_string(d.gpu) + (d.mig ? "/mig" + std::to_string(*d.mig) : "");
}

// One job's figures this round, gathered over the devices it is on.
struct JobLedger::SampleSum {
  std::array<double, kMetricCount> sum{};
  std::array<int, kMetricCount> n{};
  std::uint64_t events = 0;
  bool any_events = false;

  void add(Metric m, std::optional<double> x) {
    if (!x) return;
    sum[m] += *x;
    ++n[m];
  }
  // The device's figures as the job has them (`own`: alone there).
  void add_device(const DeviceReading& d, const JobGpuView& v, bool own) {
    add(kUtilPct, pct(v.utilization));
    add(kMemMib, double(v.memory_bytes) / (1 << 20));
    if (own) add(kPowerW, d.power_watts);
    if (d.sm_clock_hz) add(kSmMhz, double(*d.sm_clock_hz) / 1e6);
    if (d.health.clock_events) {
      add(kThermal, (*d.health.clock_events & clock_event::kThermalBits) ? 1.0 : 0.0);
      add(kPowerCap, (*d.health.clock_events & clock_event::kSwPowerCap) ? 1.0 : 0.0);
      events |= *d.health.clock_events;
      any_events = true;
    }
    add(kSmActivePct, pct(v.sm_active));
    add(kTensorActivePct, pct(v.tensor_active));
    add(kFp32ActivePct, pct(v.fp32_active));
    add(kFp16ActivePct, pct(v.fp16_active));
    if (own) add(kDramActivePct, pct(d.gpm_dram_active));
    if (own) add(kSmOccupancyPct, pct(d.gpm_sm_occupancy));
  }
  JobSample sample() const {
    JobSample s;
    for (int m = 0; m < kMetricCount; ++m)
      if (n[m]) s.v[m] = summed(Metric(m)) ? sum[m] : sum[m] / n[m];
    if (any_events) s.clock_events = events;
    return s;
  }
};

void JobLedger::add_round(const LedgerRound& round) {
  const Readings& r = *round.readings;
  double t = r.sampled_at;
  if (last_t_ && t <= *last_t_) return;
  double dt = last_t_ ? t - *last_t_ : 0;
  last_t_ = t;
  for (auto& [key, job] : jobs_) {
    job.processes = 0;
    for (auto& [k, g] : job.gpus) g.view.present = false;
  }
  hpc_jobs_.clear();
  std::map<JobKey, SampleSum> sums;
  for (std::size_t i = 0; i < r.devices.size(); ++i)
    if (r.devices[i].processes && !has_mig_children(r, i)) account_device(i, r.devices[i], round, dt, &sums);
  for (auto& [key, sum] : sums) {
    auto it = jobs_.find(key);
    if (it == jobs_.end()) continue;
    auto cpu = round.cpu.find(key);
    if (cpu != round.cpu.end()) account_cpu(&it->second, cpu->second, dt);
    judge_job(&it->second, sum.sample(), dt);
  }
  expire(t);
}

JobLedger::Job* JobLedger::job_for(const JobOwner& owner, double t, double unix_now) {
  auto it = jobs_.find(job_key(owner));
  if (it == jobs_.end() && jobs_.size() >= options_.max_jobs) {
    static const JobOwner overflow = unknown_owner("overflow");
    if (job_key(owner) != job_key(overflow)) return job_for(overflow, t, unix_now);
  }
  if (it == jobs_.end()) {
    it = jobs_.emplace(job_key(owner), Job{}).first;
    it->second.start_unix = unix_now;
    it->second.first_t = t;
  }
  Job& job = it->second;
  job.owner = owner;  // the newest word on it (a user name may become known)
  job.ended = false;
  return &job;
}

void JobLedger::account_device(std::size_t index, const DeviceReading& d, const LedgerRound& round, double dt,
                               std::map<JobKey, SampleSum>* sums) {
  std::map<JobKey, Share> shares = shares_of(index, d, round);
  std::map<JobKey, double> weights = weights_of(shares);
  std::string key = device_key(d);
  std::optional<double> energy;
  if (d.energy_joules) {
    auto last = last_energy_.find(key);
    if (last != last_energy_.end()) energy = std::max(0.0, *d.energy_joules - last->second);
    last_energy_[key] = *d.energy_joules;
  }
  bool shared = shares.size() > 1;
  for (const auto& [k, s] : shares) {
    Job* job = job_for(*s.owner, round.readings->sampled_at, round.unix_now);
    Gpu& g = job->gpus[key];
    g.capacity = capacity_of(d);
    update_view(d, s, shared, dt, energy, weights.at(k), &g.view);
    job->processes += s.processes;
    if (s.owner->scheduler == "slurm") hpc_jobs_[index].push_back(s.owner->job);
    (*sums)[job_key(job->owner)].add_device(d, g.view, !shared);
  }
}

void JobLedger::account_cpu(Job* job, const JobCpuReading& cpu, double dt) {
  job->cpu_allowed = cpu.cores_allowed;
  if (cpu.usage_s) {
    if (job->last_usage_s && dt > 0) job->cpu_used = std::max(0.0, (*cpu.usage_s - *job->last_usage_s) / dt);
    job->last_usage_s = cpu.usage_s;
  }
  std::optional<double> top;
  std::map<std::uint32_t, double> now;
  for (const auto& [pid, s] : cpu.process_cpu_s) {
    now[pid] = s;
    auto last = job->last_process_s.find(pid);
    if (last != job->last_process_s.end() && dt > 0) top = std::max(top.value_or(0), std::max(0.0, (s - last->second) / dt));
  }
  job->last_process_s = std::move(now);
  job->top_cores = top;
}

void JobLedger::judge_job(Job* job, const JobSample& gpu_sample, double dt) {
  JobSample s = gpu_sample;
  s.t = *last_t_ - job->first_t;
  s.v[kCpuCores] = job->cpu_used;
  s.v[kTopCpuCores] = job->top_cores;
  if (!job->last_process_s.empty()) s.v[kWorkers] = double(job->last_process_s.size() - 1);
  job->timeline.add(s);
  JobContext c;
  for (const auto& [k, g] : job->gpus) c.gpus.push_back(g.capacity);
  if (job->cpu_allowed && !c.gpus.empty())
    c.cpus_per_gpu = std::max(1, int(std::floor(*job->cpu_allowed / double(c.gpus.size()))));
  c.interval_s = dt > 0 ? dt : 1;
  double held = 0;
  for (const auto& [k, g] : job->gpus) held = std::max(held, g.view.gpu_seconds);
  long long samples = 0;
  for (const auto& p : job->timeline.points()) samples += p.samples;
  if (samples < options_.min_samples || held < options_.min_seconds) {
    job->verdict = {"too-short",
                    "seen " + std::to_string(samples) + " samples over " + fixed(held) + " s on its GPUs",
                    "a verdict needs " + std::to_string(options_.min_samples) + " samples and " +
                        fixed(options_.min_seconds, options_.min_seconds == std::floor(options_.min_seconds) ? 0 : 2) +
                        " s",
                    {{"samples", double(samples)}, {"seconds", held}},
                    {}};
    return;
  }
  job->verdict = judge(c, job->timeline).front();
}

void JobLedger::expire(double t) {
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    Job& job = it->second;
    bool present = false;
    for (const auto& [k, g] : job.gpus) present = present || g.view.present;
    if (present) {
      ++it;
      continue;
    }
    if (!job.ended) job.ended = true, job.ended_t = t;
    if (t - job.ended_t > options_.retention_s)
      it = jobs_.erase(it);
    else
      ++it;
  }
}

std::vector<JobView> JobLedger::jobs() const {
  std::vector<JobView> out;
  for (const auto& [key, job] : jobs_) {
    JobView v;
    v.owner = job.owner;
    for (const auto& [k, g] : job.gpus) v.gpus.push_back(g.view);
    std::sort(v.gpus.begin(), v.gpus.end(), [](const JobGpuView& a, const JobGpuView& b) {
      return std::pair(a.gpu, a.mig.value_or(-1)) < std::pair(b.gpu, b.mig.value_or(-1));
    });
    v.cpu_cores_used = job.cpu_used;
    v.cpu_cores_allowed = job.cpu_allowed;
    v.processes = job.processes;
    v.start_unix = job.start_unix;
    v.ended = job.ended;
    v.verdict = job.verdict;
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace gpuenv::fleet
