#include "sense/nvml/job_watch.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "model/hardware/clock_events.h"
#include "sys/fs.h"
#include "sense/nvml/nvml_api.h"
#include "sense/nvml/nvml_call.h"
#include "sense/nvml/nvml_gpm.h"
#include "sense/nvml/nvml_reading.h"
#include "sense/nvml/nvml_session.h"
#include "sense/host/proc_tree.h"

namespace gpuenv {
namespace {

// Adds x to an optional sum.
void add(std::optional<double>* sum, double x) { *sum = sum->value_or(0) + x; }

// The GPU memory of `pids`' processes on d, in bytes; nullopt when NVML cannot say.
// A process NVML lists whose PID this /proc does not show belongs to another
// PID namespace (a container sees host PIDs): it is counted as the job's only
// when `foreign_is_ours` and no PID matched.
std::optional<double> process_memory_bytes(const NvmlFunctions& fn, nvml::Device d, const std::set<int>& pids,
                                           const std::string& proc, bool foreign_is_ours) {
  if (!fn.processes.call) return std::nullopt;
  std::vector<nvml::ProcessInfo> infos(64);
  unsigned n = infos.size();
  nvml::Return rc = fn.processes.call(d, &n, infos.data());
  if (rc == nvml::kErrorInsufficientSize && n <= 4096) {
    infos.resize(n + 16), n = infos.size();
    rc = fn.processes.call(d, &n, infos.data());
  }
  if (rc != nvml::kSuccess) return std::nullopt;
  double mine = 0, foreign = 0;
  bool matched = false;
  for (unsigned i = 0; i < std::min<unsigned>(n, infos.size()); ++i) {
    const auto& p = infos[i];
    double bytes = p.used_gpu_memory == nvml::kValueNotAvailable ? 0 : double(p.used_gpu_memory);
    if (pids.count(int(p.pid))) mine += bytes, matched = true;
    else if (!fs::exists(proc + "/" + std::to_string(p.pid))) foreign += bytes;
  }
  return matched || !foreign_is_ours ? mine : mine + foreign;
}

constexpr double kBytesPerMib = 1024.0 * 1024.0;

}  // namespace

struct JobWatch::Impl {
  JobWatchOptions o;
  NvmlSession session;  // declared before gpm: shut down after its samples are freed
  std::vector<NvmlGpu> watched;  // the job's GPUs, or its MIG device
  std::vector<nvml::Device> others;  // the whole GPUs besides
  std::vector<GpmDevice> gpm;  // one per watched device
  JobContext context;
  Timeline timeline;
  CpuMeter cpu;
  std::optional<double> peak_bytes;  // the most the job's processes held on one GPU in a sample
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now(), last = start;

  const NvmlFunctions& fn() const { return session.nvml().fn; }

  ~Impl() { gpm.clear(); }  // frees NVML's GPM samples while NVML is still up

  bool open(std::string* why) {
    Problem p;
    std::vector<NvmlGpu> listed;
    bool migs = std::any_of(o.uuids.begin(), o.uuids.end(),
                            [](const std::string& u) { return u.rfind("MIG-", 0) == 0; });
    if (!session.open(o.nvml_library, &p) || !session.gpus(&listed, &p, migs) ||
        !NvmlSession::all_listed(listed, o.uuids, &p))
      return *why = p.message, false;
    auto mine = [&](const std::string& uuid) {
      return std::find(o.uuids.begin(), o.uuids.end(), uuid) != o.uuids.end();
    };
    std::set<nvml::Device> used;  // whole GPUs the job runs on, or on a MIG device of
    for (const NvmlGpu& g : listed)
      if (mine(g.uuid)) {
        watched.push_back(g), used.insert(g.whole());
        context.gpus.push_back(capacities(g));
        // A MIG device whose GPU instance NVML did not name gets no GPM: its GPU's is not its own.
        if (g.parent && !g.gpu_instance_id) gpm.emplace_back();
        else gpm.emplace_back(session.nvml(), g.whole(), g.gpu_instance_id);
      }
    for (const NvmlGpu& g : listed)
      if (!g.parent && !used.count(g.handle)) others.push_back(g.handle);
    return true;
  }

  // What the verdicts weigh the samples against, read through the calls
  // every NVML reader shares (sense/nvml/nvml_call.h): a MIG device's name
  // and memory, its GPU's link, power limit and clock.
  JobGpu capacities(const NvmlGpu& device) const {
    const NvmlFunctions& fn = this->fn();
    NvmlCaller call(session.nvml());
    nvml::Device d = device.handle, whole = device.whole();
    JobGpu g;
    g.uuid = device.uuid;
    g.name = get_string(call, fn.name, d);
    if (std::optional<MemoryInfo> mem = memory_info(call, fn, d)) g.memory_total_mib = mem->total / (1024.0 * 1024.0);
    g.pcie_gen = get_int(call, fn.pcie_gen_current, whole);
    g.pcie_width = get_int(call, fn.pcie_width_current, whole);
    if (std::optional<std::uint32_t> mw = get_uint(call, fn.power_limit, whole)) g.power_limit_w = *mw / 1000.0;
    unsigned mhz = 0;
    if (call(fn.max_clock, whole, nvml::kClockSm, &mhz)) g.max_sm_mhz = mhz;
    return g;
  }

  // The job's memory on d (MiB), counted toward its peak on one GPU.
  std::optional<double> job_memory_mib(nvml::Device d, const std::set<int>& pids, bool foreign_is_ours) {
    std::optional<double> bytes = process_memory_bytes(fn(), d, pids, o.proc, foreign_is_ours);
    if (!bytes) return std::nullopt;
    peak_bytes = std::max(peak_bytes.value_or(0), *bytes);
    return *bytes / kBytesPerMib;
  }

  // The GPU's live state (sense/nvml/nvml_reading.h) and, beside it, the
  // job's own memory on it and the PCIe throughput. On a MIG device: its
  // GPU's power, clock and clock events, the device's own memory, and
  // neither utilisation (NVML has none of a MIG device; sample_gpm's GPM
  // stands in) nor the PCIe traffic, which is the whole GPU's.
  void sample_gpu(const NvmlGpu& g, const std::set<int>& pids, JobSample* s) {
    const NvmlFunctions& fn = this->fn();
    nvml::Device d = g.whole();
    DeviceReading r = read_live_state(session.nvml(), d);
    double n = double(watched.size());
    if (r.utilization_ratio && !g.parent)
      add(&s->v[kUtilPct], std::round(100 * *r.utilization_ratio) / n);  // NVML's whole percent
    if (auto mib = job_memory_mib(g.handle, pids, true)) add(&s->v[kMemMib], *mib);
    if (r.power_watts) add(&s->v[kPowerW], *r.power_watts);
    if (r.sm_clock_hz) add(&s->v[kSmMhz], double(*r.sm_clock_hz / 1000000u) / n);
    if (std::optional<std::uint64_t> mask = r.health.clock_events) {
      s->clock_events = s->clock_events.value_or(0) | *mask;
      s->v[kThermal] = std::max(s->v[kThermal].value_or(0), (*mask & clock_event::kThermalBits) ? 1.0 : 0.0);
      s->v[kPowerCap] = std::max(s->v[kPowerCap].value_or(0), (*mask & clock_event::kSwPowerCap) ? 1.0 : 0.0);
    }
    if (g.parent) return;
    NvmlCaller call(session.nvml());
    unsigned kib_per_s = 0;
    if (call(fn.pcie_throughput, d, nvml::kPcieUtilRxBytes, &kib_per_s)) add(&s->v[kPcieRxMBs], kib_per_s * 1024.0 / 1e6);
    if (call(fn.pcie_throughput, d, nvml::kPcieUtilTxBytes, &kib_per_s)) add(&s->v[kPcieTxMBs], kib_per_s * 1024.0 / 1e6);
  }

  // NVML GPM between this sample and the last, averaged over the watched
  // devices; a figure stays unknown unless every device gave it. Where NVML
  // gave no utilisation (a MIG device), GPM's graphics-engine activity is
  // the utilisation: the time a kernel ran, as nvidia-smi's and DCGM's
  // GR_ENGINE_ACTIVE count it (docs/feedback.md).
  void sample_gpm(JobSample* s) {
    static constexpr std::pair<Metric, std::optional<double> GpmRatios::*> kFields[] = {
        {kUtilPct, &GpmRatios::gr_engine_active},
        {kSmActivePct, &GpmRatios::sm_active},     {kTensorActivePct, &GpmRatios::tensor_active},
        {kFp32ActivePct, &GpmRatios::fp32_active}, {kFp16ActivePct, &GpmRatios::fp16_active},
        {kDramActivePct, &GpmRatios::dram_active}, {kSmOccupancyPct, &GpmRatios::sm_occupancy}};
    std::array<std::optional<double>, std::size(kFields)> sum{};
    std::array<std::size_t, std::size(kFields)> n{};
    for (GpmDevice& g : gpm) {
      NvmlCaller call(session.nvml());  // the watcher reports nothing per call
      std::optional<GpmRatios> r = g.next(call);
      for (std::size_t i = 0; r && i < std::size(kFields); ++i)
        if (const auto& x = (*r).*kFields[i].second) add(&sum[i], 100 * *x), ++n[i];
    }
    for (std::size_t i = 0; i < std::size(kFields); ++i)
      if (n[i] == gpm.size() && sum[i] && !s->v[kFields[i].first]) s->v[kFields[i].first] = *sum[i] / double(n[i]);
  }

  void sample() {
    auto now = std::chrono::steady_clock::now();
    double dt = std::chrono::duration<double>(now - last).count();
    last = now;
    std::vector<ProcStat> tree = process_tree(o.root, o.proc);
    std::set<int> pids;
    for (const auto& p : tree) pids.insert(p.pid);
    JobSample s;
    s.t = std::chrono::duration<double>(now - start).count();
    TreeCpu c = cpu.read(tree, dt);
    if (dt > 0 && c.processes > 0) {
      s.v[kCpuCores] = c.cores, s.v[kTopCpuCores] = c.top_cores;
      s.v[kWorkers] = std::max(0, c.processes - 1);
    }
    for (const NvmlGpu& g : watched) sample_gpu(g, pids, &s);
    sample_gpm(&s);
    for (nvml::Device d : others)
      if (auto mib = job_memory_mib(d, pids, false)) add(&s.v[kOtherGpuMemMib], *mib);
    if (c.processes > 0 || !watched.empty()) timeline.add(s);
  }
};

JobWatch::JobWatch() = default;

JobWatch::~JobWatch() {
  JobContext c;
  Timeline t;
  stop(&c, &t);
}

void JobWatch::start(JobWatchOptions options) {
  impl_ = std::make_unique<Impl>();
  impl_->o = std::move(options);
  impl_->context.interval_s = impl_->o.interval.count() / 1000.0;
  thread_.start(impl_->o.interval, [this] { impl_->sample(); }, [this] { begin(); });
}

void JobWatch::begin() {
  // The lowest priority, for this thread only (and what NVML starts from it).
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
  std::string why;
  if (impl_->o.uuids.empty()) {
    why = "the plan gives the job no GPU";
  } else if (!impl_->open(&why)) {
    impl_->watched.clear(), impl_->others.clear(), impl_->context.gpus.clear();
  }
  if (!why.empty()) {
    impl_->context.unwatched = why;
    if (impl_->o.on_unwatched) impl_->o.on_unwatched(why);
  }
}

void JobWatch::stop(JobContext* context, Timeline* timeline, std::optional<std::int64_t>* peak_bytes) {
  if (!impl_) return;
  thread_.stop();
  *context = std::move(impl_->context);
  *timeline = std::move(impl_->timeline);
  if (peak_bytes && impl_->peak_bytes)
    *peak_bytes = std::int64_t(std::min(*impl_->peak_bytes, double(kMaxPeakMemoryBytes)));
  impl_.reset();
}

}  // namespace gpuenv
