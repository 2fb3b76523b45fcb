#include "sense/nvml/job_watch.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "model/clock_events.h"
#include "sys/fs.h"
#include "sense/nvml/nvml_api.h"
#include "sense/nvml/nvml_gpm.h"
#include "sense/nvml/nvml_library.h"
#include "sense/host/proc_tree.h"

namespace gpuenv {
namespace {

constexpr std::uint64_t kThermalBits = clock_event::kHwSlowdown | clock_event::kSwThermalSlowdown |
                                       clock_event::kHwThermalSlowdown | clock_event::kHwPowerBrakeSlowdown;

// Adds x to an optional sum.
void add(std::optional<double>* sum, double x) { *sum = sum->value_or(0) + x; }

// The GPU memory of `pids`' processes on d; nullopt when NVML cannot say.
// A process NVML lists whose PID this /proc does not show belongs to another
// PID namespace (a container sees host PIDs): it is counted as the job's only
// when `foreign_is_ours` and no PID matched.
std::optional<double> process_memory_mib(const NvmlFunctions& fn, nvml::Device d, const std::set<int>& pids,
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
    double mib = p.used_gpu_memory == nvml::kValueNotAvailable ? 0 : double(p.used_gpu_memory) / (1024.0 * 1024.0);
    if (pids.count(int(p.pid))) mine += mib, matched = true;
    else if (!fs::exists(proc + "/" + std::to_string(p.pid))) foreign += mib;
  }
  return matched || !foreign_is_ours ? mine : mine + foreign;
}

}  // namespace

struct JobWatch::Impl {
  JobWatchOptions o;
  Nvml nvml;
  const NvmlFunctions& fn = nvml.fn;
  bool initialised = false;
  std::vector<nvml::Device> watched, others;
  std::vector<GpmDevice> gpm;  // one per watched GPU
  JobContext context;
  Timeline timeline;
  CpuMeter cpu;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now(), last = start;

  ~Impl() {
    gpm.clear();  // frees NVML's GPM samples while NVML is still up
    if (initialised) fn.shutdown.call();
  }

  bool open(std::string* why) {
    Problem p;
    if (!load_nvml(o.nvml_library, &nvml, &p)) return *why = p.message, false;
    if (!fn.uuid.call) return *why = o.nvml_library + ": no nvmlDeviceGetUUID (the GPUs cannot be told apart)", false;
    if (fn.init.call() != nvml::kSuccess) return *why = std::string(fn.init.name) + " failed", false;
    initialised = true;
    unsigned n = 0;
    if (fn.count.call(&n) != nvml::kSuccess) return *why = std::string(fn.count.name) + " failed", false;
    for (unsigned i = 0; i < n; ++i) {
      nvml::Device d = nullptr;
      char buf[nvml::kUuidBufferSize] = {0};
      if (fn.handle.call(i, &d) != nvml::kSuccess || fn.uuid.call(d, buf, sizeof buf) != nvml::kSuccess) continue;
      bool mine = std::find(o.uuids.begin(), o.uuids.end(), std::string(buf)) != o.uuids.end();
      (mine ? watched : others).push_back(d);
      if (mine) context.gpus.push_back(capacities(d, buf));
    }
    if (watched.size() != o.uuids.size()) return *why = "NVML does not list every GPU of the plan", false;
    for (nvml::Device d : watched) gpm.emplace_back(nvml, d);
    return true;
  }

  JobGpu capacities(nvml::Device d, const std::string& uuid) const {
    JobGpu g;
    g.uuid = uuid;
    char name[nvml::kDeviceNameBufferSize] = {0};
    nvml::Memory mem{};
    unsigned v = 0;
    if (fn.name.call && fn.name.call(d, name, sizeof name) == nvml::kSuccess) g.name = name;
    if (fn.memory.call && fn.memory.call(d, &mem) == nvml::kSuccess) g.memory_total_mib = mem.total / (1024.0 * 1024.0);
    if (fn.pcie_gen_current.call && fn.pcie_gen_current.call(d, &v) == nvml::kSuccess) g.pcie_gen = int(v);
    if (fn.pcie_width_current.call && fn.pcie_width_current.call(d, &v) == nvml::kSuccess) g.pcie_width = int(v);
    if (fn.power_limit.call && fn.power_limit.call(d, &v) == nvml::kSuccess) g.power_limit_w = v / 1000.0;
    if (fn.max_clock.call && fn.max_clock.call(d, nvml::kClockSm, &v) == nvml::kSuccess) g.max_sm_mhz = v;
    return g;
  }

  void sample_gpu(nvml::Device d, const std::set<int>& pids, JobSample* s) const {
    nvml::Utilization u{};
    unsigned v = 0;
    unsigned long long mask = 0;
    if (fn.utilization.call && fn.utilization.call(d, &u) == nvml::kSuccess)
      add(&s->v[kUtilPct], double(u.gpu) / double(watched.size()));
    if (auto mib = process_memory_mib(fn, d, pids, o.proc, true)) add(&s->v[kMemMib], *mib);
    if (fn.power_usage.call && fn.power_usage.call(d, &v) == nvml::kSuccess) add(&s->v[kPowerW], v / 1000.0);
    if (fn.clock.call && fn.clock.call(d, nvml::kClockSm, &v) == nvml::kSuccess)
      add(&s->v[kSmMhz], double(v) / double(watched.size()));
    if (fn.clocks_event_reasons.call && fn.clocks_event_reasons.call(d, &mask) == nvml::kSuccess) {
      s->clock_events = s->clock_events.value_or(0) | mask;
      s->v[kThermal] = std::max(s->v[kThermal].value_or(0), (mask & kThermalBits) ? 1.0 : 0.0);
      s->v[kPowerCap] = std::max(s->v[kPowerCap].value_or(0), (mask & clock_event::kSwPowerCap) ? 1.0 : 0.0);
    }
    if (fn.pcie_throughput.call && fn.pcie_throughput.call(d, nvml::kPcieUtilRxBytes, &v) == nvml::kSuccess)
      add(&s->v[kPcieRxMBs], v * 1024.0 / 1e6);
    if (fn.pcie_throughput.call && fn.pcie_throughput.call(d, nvml::kPcieUtilTxBytes, &v) == nvml::kSuccess)
      add(&s->v[kPcieTxMBs], v * 1024.0 / 1e6);
  }

  // NVML GPM between this sample and the last, averaged over the watched
  // GPUs; a figure stays unknown unless every GPU gave it.
  void sample_gpm(JobSample* s) {
    static constexpr std::pair<Metric, std::optional<double> GpmRatios::*> kFields[] = {
        {kSmActivePct, &GpmRatios::sm_active},     {kTensorActivePct, &GpmRatios::tensor_active},
        {kFp32ActivePct, &GpmRatios::fp32_active}, {kFp16ActivePct, &GpmRatios::fp16_active},
        {kDramActivePct, &GpmRatios::dram_active}, {kSmOccupancyPct, &GpmRatios::sm_occupancy}};
    std::vector<Problem> ignored;  // the watcher reports nothing per call
    std::array<std::optional<double>, std::size(kFields)> sum{};
    std::array<std::size_t, std::size(kFields)> n{};
    for (GpmDevice& g : gpm) {
      NvmlCaller call(nvml, "", &ignored);
      std::optional<GpmRatios> r = g.next(call);
      for (std::size_t i = 0; r && i < std::size(kFields); ++i)
        if (const auto& x = (*r).*kFields[i].second) add(&sum[i], 100 * *x), ++n[i];
    }
    for (std::size_t i = 0; i < std::size(kFields); ++i)
      if (n[i] == gpm.size() && sum[i]) s->v[kFields[i].first] = *sum[i] / double(n[i]);
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
    for (nvml::Device d : watched) sample_gpu(d, pids, &s);
    sample_gpm(&s);
    for (nvml::Device d : others)
      if (auto mib = process_memory_mib(fn, d, pids, o.proc, false)) add(&s.v[kOtherGpuMemMib], *mib);
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
  stopping_ = false;
  thread_ = std::thread([this] { loop(); });
}

void JobWatch::loop() {
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
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, impl_->o.interval, [this] { return stopping_; })) impl_->sample();
}

void JobWatch::stop(JobContext* context, Timeline* timeline) {
  if (!impl_) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  *context = std::move(impl_->context);
  *timeline = std::move(impl_->timeline);
  impl_.reset();
}

}  // namespace gpuenv
