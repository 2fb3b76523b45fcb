#include "bench/stats.h"

#include <algorithm>
#include <cmath>

namespace gpuenv::bench {

std::optional<double> median(std::vector<double> samples) {
  std::erase_if(samples, [](double x) { return std::isnan(x); });
  if (samples.empty()) return std::nullopt;
  std::sort(samples.begin(), samples.end());
  size_t n = samples.size();
  return n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

std::optional<double> rate(double work, double seconds) {
  if (!(seconds > 0) || std::isnan(work)) return std::nullopt;
  return work / seconds;
}

std::optional<double> percent_of_peak(std::optional<double> value, std::optional<double> peak) {
  if (!value || !peak || !(*peak > 0)) return std::nullopt;
  return 100.0 * *value / *peak;
}

std::optional<double> allreduce_busbw(double algbw, int ranks) {
  if (ranks < 2) return std::nullopt;
  return algbw * 2.0 * (ranks - 1) / ranks;
}

std::optional<double> spread(const std::vector<double>& samples) {
  if (samples.size() < 2) return std::nullopt;
  auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
  auto mid = median(samples);
  if (!mid || !(*mid > 0)) return std::nullopt;
  return (*hi - *lo) / *mid;
}

double gemm_flops(long long m, long long n, long long k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

}  // namespace gpuenv::bench
