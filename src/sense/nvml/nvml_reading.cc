#include "sense/nvml/nvml_reading.h"

#include <climits>
#include <vector>

namespace gpuenv {
namespace {

void read_memory(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, DeviceReading* r) {
  if (std::optional<MemoryInfo> m = memory_info(call, f, d)) {
    r->memory_total_bytes = m->total;
    r->memory_free_bytes = m->free;
    r->memory_used_bytes = m->used;
    r->memory_reserved_bytes = m->reserved;
  }
}

void read_utilization(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, DeviceReading* r) {
  nvml::Utilization u{};
  if (call(f.utilization, d, &u) && u.gpu <= 100 && u.memory <= 100) {
    r->utilization_ratio = u.gpu / 100.0;
    r->memory_utilization_ratio = u.memory / 100.0;
  }
}

std::optional<std::uint64_t> clock_hz(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, int type) {
  unsigned mhz = 0;
  if (!call(f.clock, d, type, &mhz)) return std::nullopt;
  return std::uint64_t{mhz} * 1000000u;
}

void read_power(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, DeviceReading* r) {
  unsigned milliwatts = 0;
  unsigned long long millijoules = 0;
  if (call(f.power_usage, d, &milliwatts)) r->power_watts = milliwatts / 1000.0;
  if (call(f.energy, d, &millijoules)) r->energy_joules = static_cast<double>(millijoules) / 1000.0;
}

void read_clocks(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, DeviceReading* r) {
  r->sm_clock_hz = clock_hz(call, f, d, nvml::kClockSm);
  r->memory_clock_hz = clock_hz(call, f, d, nvml::kClockMem);
}

void read_temperature(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, GpuHealth* h) {
  unsigned celsius = 0;
  if (call(f.temperature, d, nvml::kTemperatureGpu, &celsius) && celsius <= INT_MAX)
    h->temperature_c = static_cast<int>(celsius);
}

void read_clock_events(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, GpuHealth* h) {
  unsigned long long reasons = 0;
  if (call(f.clocks_event_reasons, d, &reasons)) h->clock_events = reasons;
}

std::optional<std::uint64_t> ecc_count(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, int type) {
  unsigned long long n = 0;
  if (!call(f.total_ecc_errors, d, type, nvml::kVolatileEcc, &n)) return std::nullopt;
  return n;
}

void read_memory_errors(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, GpuHealth* h) {
  h->ecc_corrected = ecc_count(call, f, d, nvml::kMemoryErrorCorrected);
  h->ecc_uncorrected = ecc_count(call, f, d, nvml::kMemoryErrorUncorrected);
  unsigned correctable = 0, uncorrectable = 0, pending = 0, failure = 0;
  if (call(f.remapped_rows, d, &correctable, &uncorrectable, &pending, &failure)) {
    h->row_remap_correctable = correctable;
    h->row_remap_uncorrectable = uncorrectable;
    h->row_remap_pending = pending != 0;
    h->row_remap_failure = failure != 0;
  }
}

}  // namespace

void read_usage(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, DeviceReading* r) {
  read_utilization(call, f, d, r);
  read_memory(call, f, d, r);
}

void read_health(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, GpuHealth* h) {
  read_temperature(call, f, d, h);
  read_clock_events(call, f, d, h);
  read_memory_errors(call, f, d, h);
}

void read_live_state(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, DeviceReading* r) {
  read_usage(call, f, d, r);
  read_power(call, f, d, r);
  read_clocks(call, f, d, r);
  read_health(call, f, d, &r->health);
}

DeviceReading read_live_state(const Nvml& nvml, nvml::Device d) {
  Gpu lost;  // where a lost GPU's Problem goes, so that it is asked nothing more
  NvmlCaller call(nvml, &lost);
  DeviceReading r;
  read_live_state(call, nvml.fn, d, &r);
  r.up = !call.stopped();
  return r;
}

}  // namespace gpuenv
