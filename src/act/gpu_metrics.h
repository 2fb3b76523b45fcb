// The metrics `gpuenv export` serves: one round of readings (and what was
// fixed at start) as Prometheus families. Pure. Every series is listed in
// docs/metrics.md; a value NVML did not give has no series.
#pragma once

#include <string>
#include <vector>

#include "act/prometheus_text.h"
#include "model/gpu_reading.h"

namespace gpuenv {

/// The families, in docs/metrics.md's order. `now` is the steady clock in
/// seconds: gpuenv_exporter_scrape_age_seconds is now - r.sampled_at.
std::vector<prometheus::Family> gpu_metric_families(const Readings& r, const ExporterInfo& info,
                                                    double now);

/// The /metrics body: render(gpu_metric_families(r, info, now)).
std::string render_gpu_metrics(const Readings& r, const ExporterInfo& info, double now);

/// The labels of a device's series: gpu, mig (MIG devices), uuid, name,
/// pci_bus_id; those NVML did not give are left out.
prometheus::Labels device_labels(const DeviceReading& d);

}  // namespace gpuenv
