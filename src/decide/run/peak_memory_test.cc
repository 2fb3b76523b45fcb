#include "decide/run/peak_memory.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuenv {
namespace {

TEST(PeakMemory, TorchsFigureFirstThenNvmls) {
  struct Row {
    const char* what;
    std::optional<std::int64_t> torch, nvml;
    std::optional<JobPeakMemory> peak;
  } rows[] = {
      {"torch's when both", 30, 40, JobPeakMemory{30, "torch"}},
      {"torch's alone", 30, std::nullopt, JobPeakMemory{30, "torch"}},
      {"NVML's without the hook", std::nullopt, 40, JobPeakMemory{40, "nvml"}},
      {"torch allocated nothing: NVML's", 0, 40, JobPeakMemory{40, "nvml"}},
      {"NVML's zero is a reading", std::nullopt, 0, JobPeakMemory{0, "nvml"}},
      {"neither", std::nullopt, std::nullopt, std::nullopt},
      {"torch's zero and no NVML", 0, std::nullopt, std::nullopt},
  };
  for (const Row& r : rows) EXPECT_EQ(job_peak_memory(r.torch, r.nvml), r.peak) << r.what;
}

TEST(PeakMemory, TheErrorIsAShareOfThePlan) {
  EXPECT_NEAR(*plan_error_pct(31.2, 29.8), 4.698, 1e-3);
  EXPECT_NEAR(*plan_error_pct(28.0, 32.0), -12.5, 1e-12);
  EXPECT_DOUBLE_EQ(*plan_error_pct(5, 5), 0);
  EXPECT_FALSE(plan_error_pct(5, 0));
  EXPECT_FALSE(plan_error_pct(5, -1));
  EXPECT_FALSE(plan_error_pct(5, std::nan("")));
}

}  // namespace
}  // namespace gpuenv
