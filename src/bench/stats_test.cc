#include "bench/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace gpuenv::bench {
namespace {

TEST(BenchStats, MedianOfOddEvenAndEmpty) {
  struct Row {
    std::vector<double> samples;
    std::optional<double> want;
  } rows[] = {
      {{}, std::nullopt},
      {{3}, 3},
      {{5, 1, 3}, 3},
      {{4, 1, 3, 2}, 2.5},
      {{1, 1, 100}, 1},  // an outlier does not move it
      {{2, std::numeric_limits<double>::quiet_NaN(), 4}, 3},
      {{std::numeric_limits<double>::quiet_NaN()}, std::nullopt},
  };
  for (const auto& r : rows) EXPECT_EQ(median(r.samples), r.want);
}

TEST(BenchStats, Rate) {
  EXPECT_EQ(rate(10, 2), 5);
  EXPECT_EQ(rate(10, 0), std::nullopt);
  EXPECT_EQ(rate(10, -1), std::nullopt);
  EXPECT_EQ(rate(std::numeric_limits<double>::quiet_NaN(), 1), std::nullopt);
  // An 8192^3 GEMM in 1.4 ms is 785 TFLOP/s.
  EXPECT_NEAR(*rate(gemm_flops(8192, 8192, 8192), 1.4e-3) / 1e12, 785.4, 0.1);
}

TEST(BenchStats, PercentOfPeak) {
  EXPECT_DOUBLE_EQ(*percent_of_peak(788, 989.4), 100.0 * 788 / 989.4);
  EXPECT_DOUBLE_EQ(*percent_of_peak(4300, 4800), 89.583333333333329);
  EXPECT_EQ(percent_of_peak(788, std::nullopt), std::nullopt);
  EXPECT_EQ(percent_of_peak(std::nullopt, 989.4), std::nullopt);
  EXPECT_EQ(percent_of_peak(1, 0), std::nullopt);
}

TEST(BenchStats, AllReduceBusBandwidthAsNcclTestsDefinesIt) {
  EXPECT_EQ(allreduce_busbw(100, 1), std::nullopt);
  EXPECT_EQ(allreduce_busbw(100, 0), std::nullopt);
  EXPECT_DOUBLE_EQ(*allreduce_busbw(100, 2), 100);
  EXPECT_DOUBLE_EQ(*allreduce_busbw(100, 4), 150);
  EXPECT_DOUBLE_EQ(*allreduce_busbw(100, 8), 175);
}

TEST(BenchStats, Spread) {
  EXPECT_EQ(spread({1}), std::nullopt);
  EXPECT_DOUBLE_EQ(*spread({1, 1.1, 0.9}), 0.2);
  EXPECT_EQ(spread({0, 0}), std::nullopt);
}

TEST(BenchStats, GemmFlopsDoesNotOverflow) {
  EXPECT_DOUBLE_EQ(gemm_flops(65536, 65536, 65536), 2.0 * 65536.0 * 65536.0 * 65536.0);
  EXPECT_DOUBLE_EQ(gemm_flops(2, 3, 4), 48);
}

}  // namespace
}  // namespace gpuenv::bench
