// What is read from NVML of a GPU's live state, per GPU and per MIG device:
// sense/nvml/nvml_reading.h fills a DeviceReading's live state; `gpuenv
// export`'s rounds (sense/nvml/nvml_sampler.h) add the links, NVLink
// traffic, GPM and Xid and gather them into Readings, which act/render/gpu_metrics
// renders as Prometheus metrics (docs/metrics.md); `gpuenv check --long`'s
// watcher sums them into a WatchedGpu (model/watched_gpu.h). Unknown (not
// supported, not read because the GPU was lost) is std::nullopt, never zero.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/hardware/gpu_health.h"
#include "model/gpu_jobs.h"

namespace gpuenv {

/// One NVLink's error counters since the driver loaded
/// (nvmlDeviceGetNvLinkErrorCounter); a counter NVML did not give is nullopt.
struct NvlinkErrors {
  unsigned link = 0;
  std::optional<std::uint64_t> crc_flit, crc_data, replay, recovery;
  friend bool operator==(const NvlinkErrors&, const NvlinkErrors&) = default;
};

/// One GPU, or one MIG device of a GPU.
struct DeviceReading {
  int gpu = 0;                // NVML index of the GPU (the MIG device's parent)
  std::optional<int> mig;     // the MIG device's index under its GPU; nullopt: a whole GPU
  std::optional<std::string> uuid, name, pci_bus_id;
  bool up = false;            // answered this round (false: lost, needs a reset)
  std::optional<double> utilization_ratio, memory_utilization_ratio;  // 0..1
  std::optional<std::uint64_t> memory_used_bytes, memory_free_bytes, memory_total_bytes;
  std::optional<double> power_watts, energy_joules;
  std::optional<std::uint64_t> sm_clock_hz, memory_clock_hz;
  std::optional<int> pcie_link_generation, pcie_link_width;
  std::optional<std::uint64_t> pcie_replay_errors;
  GpuHealth health;  // read_health's: clock events, temperature, ECC counts, row remapping
  std::optional<int> nvlink_links_up;
  // NVLink data (no protocol overhead) over all links since the driver
  // loaded, and both ways together a second since the last round; nullopt
  // on a GPU without NVLink, on a MIG device, and (the rate) on the first round.
  std::optional<std::uint64_t> nvlink_tx_bytes, nvlink_rx_bytes;
  std::optional<double> nvlink_bytes_per_second;
  // NVML GPM (Hopper and newer, between this round's sample and the last
  // one), as ratios 0..1; nullopt where GPM is unsupported or not yet two
  // samples: dcgm-exporter's DCGM_FI_PROF_* fields.
  // On a GPU GPM cannot sample (gpm_unsupported: before Hopper), the same
  // ratios from DCGM's profiling fields when DCGM is installed
  // (sense/dcgm/dcgm_profiler.h).
  std::optional<double> gpm_gr_engine_active, gpm_sm_active, gpm_sm_occupancy, gpm_tensor_active,
      gpm_fp32_active, gpm_fp16_active, gpm_dram_active;
  bool gpm_unsupported = false;  // NVML said GPM cannot sample this whole GPU
  // What dcgm-exporter's fields and labels need besides the above.
  std::optional<int> minor_number;         // /dev/nvidiaN (a MIG device: its GPU's)
  std::optional<int> gpu_instance_id;      // MIG devices: GPU_I_ID
  std::optional<std::string> mig_profile;  // MIG devices: "2g.20gb" (GPU_I_PROFILE)
  std::optional<int> memory_temperature_c;  // HBM
  std::optional<std::uint64_t> xid_last;      // the last Xid since the exporter started; 0: none yet
  std::optional<std::uint64_t> xid_events;    // Xid events since the exporter started
  // The processes NVML lists on the device (compute and graphics, each PID
  // once); nullopt when it could not list them.
  std::optional<std::vector<GpuProcess>> processes;
  // dcgm-exporter's last default counters (whole GPUs; the reserved memory
  // MIG devices too): the video engines' use (0..1), the memory the driver
  // reserves, and PCIe traffic a second (GPM on Hopper and newer, else
  // nvmlDeviceGetPcieThroughput).
  std::optional<double> encoder_utilization_ratio, decoder_utilization_ratio;
  std::optional<std::uint64_t> memory_reserved_bytes;
  std::optional<double> pcie_tx_bytes_per_second, pcie_rx_bytes_per_second;
  std::vector<NvlinkErrors> nvlink_errors;  // each active link that answered; none: no NVLink
  friend bool operator==(const DeviceReading&, const DeviceReading&) = default;
};

/// The whole GPU a MIG device `d` of `devices` belongs to; nullptr for a
/// whole GPU (or a MIG device whose GPU is not in the list).
inline const DeviceReading* mig_parent(const std::vector<DeviceReading>& devices, const DeviceReading& d) {
  if (!d.mig) return nullptr;
  for (const DeviceReading& g : devices)
    if (!g.mig && g.gpu == d.gpu) return &g;
  return nullptr;
}

/// One round of the sampler: every GPU in NVML order, each followed by its
/// MIG devices.
struct Readings {
  std::vector<DeviceReading> devices;
  std::uint64_t nvml_errors_total = 0;  // failed NVML calls since the exporter started
  double sampled_at = 0;                // seconds on the steady clock
  std::optional<std::string> driver_version;  // nvmlSystemGetDriverVersion
  // DCGM, for the GPUs without GPM: serving their profiling fields, or why
  // not (cannot load libdcgm, a call failed); neither when no GPU needs it.
  bool dcgm_serving = false;
  std::optional<std::string> dcgm_problem;
};

}  // namespace gpuenv
