#include "sense/nvml/nvml_watch.h"

#include <algorithm>

#include "sense/nvml/nvml_reading.h"
#include "sense/nvml/nvml_session.h"

namespace gpuenv {
namespace {

template <typename T>
void keep_min(std::optional<T>* v, T x) {
  *v = *v ? std::min(**v, x) : x;
}
template <typename T>
void keep_max(std::optional<T>* v, T x) {
  *v = *v ? std::max(**v, x) : x;
}

unsigned mhz(std::uint64_t hz) { return static_cast<unsigned>(hz / 1000000u); }

// One reading into the extremes and the union of the reasons.
void add(const DeviceReading& r, WatchedGpu* g) {
  if (r.sm_clock_hz) keep_min(&g->sm_mhz_min, mhz(*r.sm_clock_hz)), keep_max(&g->sm_mhz_max, mhz(*r.sm_clock_hz));
  if (r.memory_clock_hz) keep_min(&g->memory_mhz_min, mhz(*r.memory_clock_hz));
  if (r.health.temperature_c) keep_max(&g->temperature_max_c, static_cast<unsigned>(*r.health.temperature_c));
  if (r.power_watts) keep_max(&g->power_max_w, static_cast<unsigned>(*r.power_watts));  // whole watts, down
  if (r.health.clock_events) g->clock_events = g->clock_events.value_or(0) | *r.health.clock_events;
  ++g->samples;
}

}  // namespace

struct NvmlWatch::Impl {
  NvmlSession session;  // declared first: shut down last
  std::vector<nvml::Device> handles;
  std::vector<WatchedGpu> gpus;

  bool find(const std::vector<std::string>& uuids, Problem* err) {
    std::vector<NvmlGpu> found;
    if (!session.find(uuids, &found, err)) return false;
    for (const NvmlGpu& f : found) {
      handles.push_back(f.handle);
      WatchedGpu g;
      g.uuid = f.uuid;
      gpus.push_back(std::move(g));
    }
    return true;
  }

  // Reads every GPU; returns the readings for the counters.
  std::vector<DeviceReading> sample() {
    std::vector<DeviceReading> out;
    for (std::size_t i = 0; i < handles.size(); ++i) {
      out.push_back(read_live_state(session.nvml(), handles[i]));
      add(out.back(), &gpus[i]);
    }
    return out;
  }

  void counters_before(const std::vector<DeviceReading>& first) {
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      gpus[i].ecc_uncorrected_before = first[i].health.ecc_uncorrected;
      gpus[i].ecc_corrected_before = first[i].health.ecc_corrected;
    }
  }

  void counters_after(const std::vector<DeviceReading>& last) {
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      gpus[i].ecc_uncorrected_after = last[i].health.ecc_uncorrected;
      gpus[i].ecc_corrected_after = last[i].health.ecc_corrected;
      gpus[i].remapping_pending = last[i].health.row_remap_pending;
      gpus[i].remapping_failed = last[i].health.row_remap_failure;
    }
  }
};

NvmlWatch::NvmlWatch() = default;

NvmlWatch::~NvmlWatch() { stop(); }

bool NvmlWatch::start(const std::string& library, const std::vector<std::string>& uuids,
                      std::chrono::milliseconds interval, Problem* err) {
  auto impl = std::make_unique<Impl>();
  if (!impl->session.open(library, err) || !impl->find(uuids, err)) return false;
  impl->counters_before(impl->sample());
  impl_ = std::move(impl);
  thread_.start(interval, [this] { impl_->sample(); });
  return true;
}

std::vector<WatchedGpu> NvmlWatch::stop() {
  if (!impl_) return {};
  thread_.stop();
  impl_->counters_after(impl_->sample());
  std::vector<WatchedGpu> out = std::move(impl_->gpus);
  impl_.reset();
  return out;
}

}  // namespace gpuenv
