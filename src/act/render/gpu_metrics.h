// The metrics `gpuenv export` serves: one round of readings (and what was
// fixed at start) as Prometheus families. Pure. Every series is listed in
// docs/metrics.md; a value NVML did not give has no series.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "act/render/prometheus_text.h"
#include "model/dcgm_counter.h"
#include "model/gpu_reading.h"
#include "model/kubelet/pod_devices.h"

namespace gpuenv {

/// What the exporter says besides the readings: fixed at start.
struct ExporterInfo {
  std::string version;                                      // gpuenv_build_info{version}
  std::vector<std::pair<std::string, std::string>> plan;  // gpuenv_plan_info{setting,value}
  std::string hostname;  // dcgm-exporter's hostname label: $NODE_NAME, else gethostname()
  std::string hostname_label = "hostname";  // export --hostname-label: "hostname" (dcgm-exporter 4.x) or "Hostname"
  bool gpuenv_names = true, dcgm_names = true;  // export --metrics: which sets to serve
  /// export -f: the DCGM fields to serve, as the counters CSV lists them;
  /// nullopt: dcgm-exporter's default counters.
  std::optional<std::vector<DcgmCounter>> dcgm_counters;
};

/// The Slurm jobs on each device, by its index in Readings::devices.
using HpcJobs = std::map<std::size_t, std::vector<std::string>>;

/// The families, in docs/metrics.md's order: gpuenv's own names, then
/// dcgm-exporter's (info.gpuenv_names, info.dcgm_names choose), then the
/// exporter's own series, which are always there. `now` is the steady clock in
/// seconds: gpuenv_exporter_scrape_age_seconds is now - r.sampled_at. A
/// device `pods` has assigned to a container gets dcgm-exporter's pod,
/// namespace and container labels on its series; a device `hpc_jobs` lists
/// Slurm jobs for (by its index in r.devices) gets its DCGM-named series once
/// for each, with dcgm-exporter's hpc_job label.
std::vector<prometheus::MetricFamily> gpu_metric_families(const Readings& r, const ExporterInfo& info, double now,
                                                    const PodDevices& pods = PodDevices(),
                                                    const HpcJobs& hpc_jobs = HpcJobs());

/// The /metrics body: render(gpu_metric_families(r, info, now, pods, hpc_jobs)).
std::string render_gpu_metrics(const Readings& r, const ExporterInfo& info, double now,
                               const PodDevices& pods = PodDevices(), const HpcJobs& hpc_jobs = HpcJobs());

/// The labels of a device's series: gpu, mig (MIG devices), uuid, name,
/// pci_bus_id; those NVML did not give are left out.
prometheus::Labels device_labels(const DeviceReading& d);

/// dcgm-exporter's labels of a device's DCGM_FI_* series: gpu, UUID,
/// pci_bus_id, device (nvidiaN), modelName, GPU_I_PROFILE and GPU_I_ID (MIG
/// devices), hostname (named `hostname_label`: dcgm-exporter 4.x's
/// `hostname`, or `Hostname` as before its rename), DCGM_FI_DRIVER_VERSION.
/// A MIG device has its GPU's (`parent`'s) UUID, address, device and model,
/// as dcgm-exporter gives.
prometheus::Labels dcgm_labels(const DeviceReading& d, const DeviceReading* parent, const std::string& hostname,
                               const std::optional<std::string>& driver_version,
                               const std::string& hostname_label = "hostname");

/// export -f: each line of the counters CSV gpuenv cannot serve, with why
/// ("DCGM_FI_DEV_FAN_SPEED (line 12): not a field gpuenv serves ...").
/// Those lines are left out; the others choose the DCGM_FI_* series
/// (ExporterInfo::dcgm_counters), with their line's type and help.
std::vector<std::string> dcgm_unservable(const std::vector<DcgmCounter>& counters);

}  // namespace gpuenv
