#include "model/hardware/gpu_peaks.h"

#include <algorithm>
#include <cctype>

namespace gpuenv {
namespace {

constexpr std::nullopt_t kNoPeak = std::nullopt;

// name, fp32, tf32, fp16, bf16, fp8 (TFLOP/s), memory GB/s
const GpuPeaks kPeaks[] = {
    // Blackwell, Hopper (SXM unless named), datacenter
    {"NVIDIA B200", 75, 1125, 2250, 2250, 4500, 8000},
    {"NVIDIA H200", 67, 494.7, 989.4, 989.4, 1978.9, 4800},
    {"NVIDIA H200 NVL", 60, 417.5, 835.5, 835.5, 1670.5, 4800},
    {"NVIDIA H100 80GB HBM3", 67, 494.7, 989.4, 989.4, 1978.9, 3350},
    {"NVIDIA H100 PCIe", 51, 378, 756.5, 756.5, 1513, 2000},
    {"NVIDIA H100 NVL", 60, 417.5, 835.5, 835.5, 1670.5, 3900},
    {"NVIDIA GH200 480GB", 67, 494.7, 989.4, 989.4, 1978.9, 4000},
    // Ampere and Ada, datacenter
    {"NVIDIA A100-SXM4-80GB", 19.5, 156, 312, 312, kNoPeak, 2039},
    {"NVIDIA A100-SXM4-40GB", 19.5, 156, 312, 312, kNoPeak, 1555},
    {"NVIDIA A100 80GB PCIe", 19.5, 156, 312, 312, kNoPeak, 1935},
    {"NVIDIA A100-PCIE-40GB", 19.5, 156, 312, 312, kNoPeak, 1555},
    {"NVIDIA A30", 10.3, 82, 165, 165, kNoPeak, 933},
    {"NVIDIA A10", 31.2, 62.5, 125, 125, kNoPeak, 600},
    {"NVIDIA L40S", 91.6, 183, 362, 362, 733, 864},
    {"NVIDIA L40", 90.5, 90.5, 181, 181, 362, 864},
    {"NVIDIA L4", 30.3, 60, 121, 121, 242.5, 300},
    // Turing and Volta
    {"Tesla T4", 8.1, kNoPeak, 65, kNoPeak, kNoPeak, 320},
    {"Tesla V100-SXM2-16GB", 15.7, kNoPeak, 125, kNoPeak, kNoPeak, 900},
    {"Tesla V100-SXM2-32GB", 15.7, kNoPeak, 125, kNoPeak, kNoPeak, 900},
    {"Tesla V100-PCIE-16GB", 14, kNoPeak, 112, kNoPeak, kNoPeak, 900},
    {"Tesla V100-PCIE-32GB", 14, kNoPeak, 112, kNoPeak, kNoPeak, 900},
    // Workstation and consumer (GeForce: the fp32-accumulate tensor rates)
    {"NVIDIA RTX 6000 Ada Generation", 91.1, 182.1, 364.2, 364.2, 728.5, 960},
    {"NVIDIA RTX A6000", 38.7, 77.4, 154.8, 154.8, kNoPeak, 768},
    {"NVIDIA GeForce RTX 5090", 104.8, 104.8, 209.5, 209.5, 419, 1792},
    {"NVIDIA GeForce RTX 4090", 82.6, 82.6, 165.2, 165.2, 330.3, 1008},
    {"NVIDIA GeForce RTX 3090", 35.6, 35.6, 71, 71, kNoPeak, 936},
};

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::optional<GpuPeaks> peaks_for(std::string_view gpu_name) {
  for (const auto& p : kPeaks)
    if (same_name(p.name, gpu_name)) return p;
  return std::nullopt;
}

std::optional<double> gemm_peak(const GpuPeaks& p, std::string_view dtype) {
  if (dtype == "fp32") return p.fp32;
  if (dtype == "tf32") return p.tf32;
  if (dtype == "fp16") return p.fp16;
  if (dtype == "bf16") return p.bf16;
  if (dtype == "fp8") return p.fp8;
  return std::nullopt;
}

std::optional<double> pcie_peak_gbps(const PcieLink& link) {
  if (!link.gen_max || !link.width_max || *link.width_max <= 0) return std::nullopt;
  auto lane = pcie_lane_gbps(*link.gen_max);
  if (!lane) return std::nullopt;
  return *lane * *link.width_max;
}

bool reaches_host_over_c2c(std::string_view gpu_name) {
  return gpu_name.find("GH200") != std::string_view::npos || gpu_name.find("GB200") != std::string_view::npos;
}

std::optional<double> host_link_peak_gbps(std::string_view gpu_name, const PcieLink& link) {
  if (reaches_host_over_c2c(gpu_name)) return std::nullopt;
  return pcie_peak_gbps(link);
}

}  // namespace gpuenv
