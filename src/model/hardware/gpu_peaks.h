// Spec peaks of common GPUs, to show every figure of `gpuenv bench` and
// `gpuenv check` as a share of what the part is sold for. Dense rates (no
// 2:4 sparsity), tensor cores with fp32 accumulation, from the vendor's
// datasheets and architecture whitepapers. They are leads, not ceilings:
// real GEMMs reach 70-90 % of them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "model/machine.h"

namespace gpuenv {

/// Peaks of one GPU model; nullopt where the part lacks the type.
struct GpuPeaks {
  std::string_view name;                              // as NVML and CUDA report it
  std::optional<double> fp32, tf32, fp16, bf16, fp8;  // TFLOP/s
  double memory_gbps = 0;                             // HBM/GDDR, GB/s (1e9 bytes)
};

/// The peaks for a GPU name (case-insensitive, exact); nullopt for a GPU
/// not in the table: its figures then show no percentage.
std::optional<GpuPeaks> peaks_for(std::string_view gpu_name);

/// The GEMM peak for dtype fp32|tf32|fp16|bf16|fp8.
std::optional<double> gemm_peak(const GpuPeaks& p, std::string_view dtype);

/// One direction of the PCIe link at its best (gen_max x width_max), in
/// GB/s after line coding: Gen5 x16 -> 63.0. nullopt when unknown.
std::optional<double> pcie_peak_gbps(const PcieLink& link);

/// Whether the GPU reaches its host over NVLink-C2C rather than PCIe: the
/// Grace Hopper and Grace Blackwell superchips (GH200, GB200), by name.
bool reaches_host_over_c2c(std::string_view gpu_name);

/// The host link's peak in one direction: pcie_peak_gbps, or nullopt for a
/// C2C part, whose PCIe figures describe no link the copies take.
std::optional<double> host_link_peak_gbps(std::string_view gpu_name, const PcieLink& link);

}  // namespace gpuenv
