// A GPU's live health, as NVML reads it (sense/nvml/nvml_reading.h's
// read_health): held once, under one set of names, by the sensed Gpu
// (model/machine.h) that doctor and `gpuenv check` judge (decide/health.h)
// and by the exporter's DeviceReading (model/gpu_reading.h). Unknown (not
// supported, not read) is std::nullopt, never zero.
#pragma once

#include <cstdint>
#include <optional>

namespace gpuenv {

struct GpuHealth {
  std::optional<std::uint64_t> clock_events;  // nvmlClocksEventReasons mask (model/hardware/clock_events.h)
  std::optional<int> temperature_c;           // the GPU core's
  // ECC errors since the driver loaded (volatile); unknown where ECC is off.
  std::optional<std::uint64_t> ecc_corrected, ecc_uncorrected;
  // Row remapping (Ampere and newer): rows remapped for correctable and
  // uncorrectable errors, one waiting for a GPU reset, one that failed (no
  // spare rows left).
  std::optional<std::uint64_t> row_remap_correctable, row_remap_uncorrectable;
  std::optional<bool> row_remap_pending, row_remap_failure;
  friend bool operator==(const GpuHealth&, const GpuHealth&) = default;
};

}  // namespace gpuenv
