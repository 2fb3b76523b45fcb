#include "sense/nvml/nvml_watch.h"

#include <algorithm>

#include "sys/dynamic_library.h"
#include "sense/nvml/nvml_api.h"

namespace gpuenv {
namespace {

struct WatchFunctions {
  Fn<nvml::InitFn> init;
  Fn<nvml::ShutdownFn> shutdown;
  Fn<nvml::DeviceGetCountFn> count;
  Fn<nvml::DeviceGetHandleByIndexFn> handle;
  Fn<nvml::DeviceGetStringFn> uuid;
  Fn<nvml::DeviceGetClockInfoFn> clock;
  Fn<nvml::DeviceGetTemperatureFn> temperature;
  Fn<nvml::DeviceGetPowerUsageFn> power;
  Fn<nvml::DeviceGetClocksEventReasonsFn> events;
  Fn<nvml::DeviceGetTotalEccErrorsFn> ecc;
  Fn<nvml::DeviceGetRemappedRowsFn> remapped;
};

std::vector<Symbol> symbols(WatchFunctions* f) {
  return {
      {{"nvmlInit_v2", "nvmlInit"}, &f->init, true},
      {{"nvmlShutdown"}, &f->shutdown, true},
      {{"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"}, &f->count, true},
      {{"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"}, &f->handle, true},
      {{"nvmlDeviceGetUUID"}, &f->uuid, true},
      {{"nvmlDeviceGetClockInfo"}, &f->clock, false},
      {{"nvmlDeviceGetTemperature"}, &f->temperature, false},
      {{"nvmlDeviceGetPowerUsage"}, &f->power, false},
      {{"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"}, &f->events, false},
      {{"nvmlDeviceGetTotalEccErrors"}, &f->ecc, false},
      {{"nvmlDeviceGetRemappedRows"}, &f->remapped, false},
  };
}

template <typename T>
void keep_min(std::optional<T>* v, T x) {
  *v = *v ? std::min(**v, x) : x;
}
template <typename T>
void keep_max(std::optional<T>* v, T x) {
  *v = *v ? std::max(**v, x) : x;
}

}  // namespace

struct NvmlWatch::Impl {
  DynamicLibrary library;
  WatchFunctions fn;
  bool initialised = false;
  std::vector<nvml::Device> handles;
  std::vector<WatchedGpu> gpus;
  std::chrono::milliseconds interval{500};

  ~Impl() {
    if (initialised) fn.shutdown.call();
  }

  std::optional<unsigned long long> ecc(nvml::Device d, int type) const {
    unsigned long long n = 0;
    if (!fn.ecc.call || fn.ecc.call(d, type, nvml::kVolatileEcc, &n) != nvml::kSuccess) return std::nullopt;
    return n;
  }

  void counters(bool before) {
    for (size_t i = 0; i < handles.size(); ++i) {
      WatchedGpu& g = gpus[i];
      (before ? g.ecc_uncorrected_before : g.ecc_uncorrected_after) = ecc(handles[i], nvml::kMemoryErrorUncorrected);
      (before ? g.ecc_corrected_before : g.ecc_corrected_after) = ecc(handles[i], nvml::kMemoryErrorCorrected);
      unsigned corr = 0, unc = 0, pending = 0, failed = 0;
      if (!before && fn.remapped.call && fn.remapped.call(handles[i], &corr, &unc, &pending, &failed) == nvml::kSuccess)
        g.remapping_pending = pending != 0, g.remapping_failed = failed != 0;
    }
  }

  void sample_one(nvml::Device d, WatchedGpu* g) const {
    unsigned v = 0;
    unsigned long long mask = 0;
    if (fn.clock.call && fn.clock.call(d, nvml::kClockSm, &v) == nvml::kSuccess)
      keep_min(&g->sm_mhz_min, v), keep_max(&g->sm_mhz_max, v);
    if (fn.clock.call && fn.clock.call(d, nvml::kClockMem, &v) == nvml::kSuccess) keep_min(&g->memory_mhz_min, v);
    if (fn.temperature.call && fn.temperature.call(d, nvml::kTemperatureGpu, &v) == nvml::kSuccess)
      keep_max(&g->temperature_max_c, v);
    if (fn.power.call && fn.power.call(d, &v) == nvml::kSuccess) keep_max(&g->power_max_w, v / 1000);
    if (fn.events.call && fn.events.call(d, &mask) == nvml::kSuccess)
      g->clock_events = g->clock_events.value_or(0) | mask;
    ++g->samples;
  }

  void sample() {
    for (size_t i = 0; i < handles.size(); ++i) sample_one(handles[i], &gpus[i]);
  }

  bool find(const std::vector<std::string>& uuids, std::string* err) {
    unsigned n = 0;
    if (fn.count.call(&n) != nvml::kSuccess) return *err = "nvmlDeviceGetCount failed", false;
    for (const auto& want : uuids) {
      nvml::Device found = nullptr;
      for (unsigned i = 0; i < n && !found; ++i) {
        nvml::Device d = nullptr;
        char buf[nvml::kUuidBufferSize] = {0};
        if (fn.handle.call(i, &d) == nvml::kSuccess && fn.uuid.call(d, buf, sizeof buf) == nvml::kSuccess &&
            want == buf)
          found = d;
      }
      if (!found) return *err = "NVML does not list " + want, false;
      handles.push_back(found);
      WatchedGpu g;
      g.uuid = want;
      gpus.push_back(std::move(g));
    }
    return true;
  }
};

NvmlWatch::NvmlWatch() = default;

NvmlWatch::~NvmlWatch() { stop(); }

bool NvmlWatch::start(const std::string& library, const std::vector<std::string>& uuids,
                      std::chrono::milliseconds interval, std::string* err) {
  auto impl = std::make_unique<Impl>();
  impl->interval = interval;
  std::string missing;
  if (!impl->library.open(library, err)) return false;
  if (!impl->library.resolve(symbols(&impl->fn), &missing)) return *err = library + ": no " + missing, false;
  if (impl->fn.init.call() != nvml::kSuccess) return *err = std::string(impl->fn.init.name) + " failed", false;
  impl->initialised = true;
  if (!impl->find(uuids, err)) return false;
  impl->counters(true);
  impl->sample();
  impl_ = std::move(impl);
  stopping_ = false;
  thread_ = std::thread([this] { loop(); });
  return true;
}

void NvmlWatch::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, impl_->interval, [this] { return stopping_; })) impl_->sample();
}

std::vector<WatchedGpu> NvmlWatch::stop() {
  if (!impl_) return {};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  impl_->sample();
  impl_->counters(false);
  std::vector<WatchedGpu> out = std::move(impl_->gpus);
  impl_.reset();
  return out;
}

}  // namespace gpuenv
