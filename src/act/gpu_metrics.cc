#include "act/gpu_metrics.h"

#include <functional>
#include <optional>

#include "model/clock_events.h"

namespace gpuenv {
namespace {

using prometheus::Family;
using prometheus::Type;
using Getter = std::function<std::optional<double>(const DeviceReading&)>;

/// One series of a device family: an extra label (or none) and its value.
struct Series {
  std::string label, label_value;  // "" : no extra label
  Getter get;
};

struct Metric {
  const char* name;
  Type type;
  const char* help;
  std::vector<Series> series;
};

template <typename T>
std::optional<double> num(const std::optional<T>& v) {
  if (!v) return std::nullopt;
  return static_cast<double>(*v);
}

#define FIELD(f) [](const DeviceReading& d) { return num(d.f); }

Series one(Getter g) { return {"", "", std::move(g)}; }

std::vector<Series> clock_event_series() {
  std::vector<Series> out;
  for (const ClockEventBit& b : kClockEventBits) {
    std::uint64_t bit = b.bit;
    out.push_back({"reason", b.name, [bit](const DeviceReading& d) -> std::optional<double> {
                     if (!d.clock_events) return std::nullopt;
                     return (*d.clock_events & bit) ? 1.0 : 0.0;
                   }});
  }
  return out;
}

const std::vector<Metric>& device_metrics() {
  static const std::vector<Metric> kMetrics = {
      {"gpuenv_gpu_up", Type::kGauge, "1 when the device answered NVML this round, 0 when it is lost",
       {one([](const DeviceReading& d) { return std::optional<double>(d.up ? 1 : 0); })}},
      {"gpuenv_gpu_utilization_ratio", Type::kGauge,
       "Fraction of the last sample period a kernel ran (nvmlDeviceGetUtilizationRates)",
       {one(FIELD(utilization_ratio))}},
      {"gpuenv_gpu_memory_utilization_ratio", Type::kGauge,
       "Fraction of the last sample period device memory was read or written",
       {one(FIELD(memory_utilization_ratio))}},
      {"gpuenv_gpu_memory_used_bytes", Type::kGauge, "Device memory allocated",
       {one(FIELD(memory_used_bytes))}},
      {"gpuenv_gpu_memory_free_bytes", Type::kGauge, "Device memory free",
       {one(FIELD(memory_free_bytes))}},
      {"gpuenv_gpu_memory_total_bytes", Type::kGauge, "Device memory in all",
       {one(FIELD(memory_total_bytes))}},
      {"gpuenv_gpu_temperature_celsius", Type::kGauge, "GPU core temperature",
       {one(FIELD(temperature_c))}},
      {"gpuenv_gpu_power_watts", Type::kGauge, "Power draw", {one(FIELD(power_watts))}},
      {"gpuenv_gpu_energy_joules_total", Type::kCounter, "Energy used since the driver loaded",
       {one(FIELD(energy_joules))}},
      {"gpuenv_gpu_sm_clock_hertz", Type::kGauge, "Current SM clock", {one(FIELD(sm_clock_hz))}},
      {"gpuenv_gpu_memory_clock_hertz", Type::kGauge, "Current memory clock",
       {one(FIELD(memory_clock_hz))}},
      {"gpuenv_gpu_clock_event_active", Type::kGauge,
       "1 while this reason holds the clocks back (nvmlClocksEventReasons)", clock_event_series()},
      {"gpuenv_gpu_pcie_link_generation", Type::kGauge, "Current PCIe link generation",
       {one(FIELD(pcie_link_generation))}},
      {"gpuenv_gpu_pcie_link_width", Type::kGauge, "Current PCIe link width (lanes)",
       {one(FIELD(pcie_link_width))}},
      {"gpuenv_gpu_pcie_replay_errors_total", Type::kCounter, "PCIe replays (link-level retransmissions)",
       {one(FIELD(pcie_replay_errors))}},
      {"gpuenv_gpu_ecc_errors_total", Type::kCounter, "ECC memory errors since the driver loaded",
       {{"type", "corrected", FIELD(ecc_corrected)}, {"type", "uncorrected", FIELD(ecc_uncorrected)}}},
      {"gpuenv_gpu_row_remap_total", Type::kCounter, "Memory rows remapped",
       {{"type", "correctable", FIELD(row_remap_correctable)},
        {"type", "uncorrectable", FIELD(row_remap_uncorrectable)}}},
      {"gpuenv_gpu_row_remap_pending", Type::kGauge, "1 when a row remap waits for a GPU reset",
       {one(FIELD(row_remap_pending))}},
      {"gpuenv_gpu_nvlink_links_up", Type::kGauge, "NVLink links active",
       {one(FIELD(nvlink_links_up))}},
  };
  return kMetrics;
}

#undef FIELD

Family device_family(const Metric& m, const std::vector<DeviceReading>& devices) {
  Family f{m.name, m.type, m.help, {}};
  for (const DeviceReading& d : devices)
    for (const Series& s : m.series)
      if (std::optional<double> v = s.get(d)) {
        prometheus::Labels labels = device_labels(d);
        if (!s.label.empty()) labels.emplace_back(s.label, s.label_value);
        f.samples.push_back({std::move(labels), *v});
      }
  return f;
}

Family plan_family(const ExporterInfo& info) {
  Family f{"gpuenv_plan_info", Type::kGauge, "The environment gpuenv decided for this machine at start (1)",
           {}};
  for (const auto& [setting, value] : info.plan) f.samples.push_back({{{"setting", setting}, {"value", value}}, 1});
  return f;
}

}  // namespace

prometheus::Labels device_labels(const DeviceReading& d) {
  prometheus::Labels l{{"gpu", std::to_string(d.gpu)}};
  if (d.mig) l.emplace_back("mig", std::to_string(*d.mig));
  if (d.uuid) l.emplace_back("uuid", *d.uuid);
  if (d.name) l.emplace_back("name", *d.name);
  if (d.pci_bus_id) l.emplace_back("pci_bus_id", *d.pci_bus_id);
  return l;
}

std::vector<Family> gpu_metric_families(const Readings& r, const ExporterInfo& info, double now) {
  std::vector<Family> out;
  for (const Metric& m : device_metrics()) out.push_back(device_family(m, r.devices));
  out.push_back(plan_family(info));
  out.push_back({"gpuenv_build_info", Type::kGauge, "The gpuenv serving these metrics (1)",
                 {{{{"version", info.version}}, 1}}});
  out.push_back({"gpuenv_exporter_scrape_age_seconds", Type::kGauge,
                 "Age of the NVML sample this scrape returns", {{{}, now - r.sampled_at}}});
  out.push_back({"gpuenv_exporter_nvml_errors_total", Type::kCounter,
                 "NVML calls that failed since the exporter started",
                 {{{}, static_cast<double>(r.nvml_errors_total)}}});
  return out;
}

std::string render_gpu_metrics(const Readings& r, const ExporterInfo& info, double now) {
  return prometheus::render(gpu_metric_families(r, info, now));
}

}  // namespace gpuenv
