#include "model/hardware/gpu_peaks.h"

#include <gtest/gtest.h>

namespace gpuenv {
namespace {

TEST(GpuPeaks, KnownGpusByTheirNvmlNames) {
  struct Row {
    const char* name;
    const char* dtype;
    std::optional<double> tflops;
    double memory_gbps;
  } rows[] = {
      {"NVIDIA H200", "bf16", 989.4, 4800},
      {"nvidia h200", "fp8", 1978.9, 4800},  // case does not matter
      {"NVIDIA H100 80GB HBM3", "tf32", 494.7, 3350},
      {"NVIDIA A100-SXM4-80GB", "fp8", std::nullopt, 2039},  // no fp8 on Ampere
      {"Tesla T4", "bf16", std::nullopt, 320},
      {"Tesla T4", "fp16", 65, 320},
      {"NVIDIA GeForce RTX 4090", "bf16", 165.2, 1008},
      {"NVIDIA L4", "fp32", 30.3, 300},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(std::string(r.name) + " " + r.dtype);
    auto p = peaks_for(r.name);
    ASSERT_TRUE(p.has_value());
    EXPECT_EQ(gemm_peak(*p, r.dtype), r.tflops);
    EXPECT_EQ(p->memory_gbps, r.memory_gbps);
  }
}

TEST(GpuPeaks, UnknownGpusAndTypesHaveNone) {
  EXPECT_FALSE(peaks_for("NVIDIA Frobnicator 9000").has_value());
  EXPECT_FALSE(peaks_for("NVIDIA H200 ").has_value());  // exact names only
  EXPECT_FALSE(peaks_for("").has_value());
  EXPECT_EQ(gemm_peak(*peaks_for("NVIDIA H200"), "fp64"), std::nullopt);
}

TEST(GpuPeaks, PcieLinkOneDirection) {
  auto link = [](std::optional<int> gen, std::optional<int> width) {
    PcieLink l;
    l.gen_max = gen, l.width_max = width;
    return l;
  };
  EXPECT_NEAR(*pcie_peak_gbps(link(5, 16)), 63.0, 0.01);
  EXPECT_NEAR(*pcie_peak_gbps(link(4, 16)), 31.5, 0.01);
  EXPECT_NEAR(*pcie_peak_gbps(link(3, 8)), 7.88, 0.01);
  EXPECT_NEAR(*pcie_peak_gbps(link(1, 1)), 0.25, 1e-9);
  EXPECT_EQ(pcie_peak_gbps(link(std::nullopt, 16)), std::nullopt);
  EXPECT_EQ(pcie_peak_gbps(link(5, std::nullopt)), std::nullopt);
  EXPECT_EQ(pcie_peak_gbps(link(9, 16)), std::nullopt);
  EXPECT_EQ(pcie_peak_gbps(link(5, 0)), std::nullopt);
}

TEST(GpuPeaks, GraceSuperchipsReachTheHostOverC2cNotPcie) {
  PcieLink gen5;
  gen5.gen_max = 5, gen5.width_max = 16;
  EXPECT_TRUE(reaches_host_over_c2c("NVIDIA GH200 480GB"));
  EXPECT_TRUE(reaches_host_over_c2c("NVIDIA GB200"));
  EXPECT_FALSE(reaches_host_over_c2c("NVIDIA H200"));
  EXPECT_EQ(host_link_peak_gbps("NVIDIA GH200 480GB", gen5), std::nullopt);
  EXPECT_NEAR(*host_link_peak_gbps("NVIDIA H200", gen5), 63.0, 0.01);
}

}  // namespace
}  // namespace gpuenv
