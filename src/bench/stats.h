// The statistics behind every figure of `gpuenv bench`: medians of trials,
// rates, percentages of peak, and NCCL's bus bandwidth.
#pragma once

#include <optional>
#include <vector>

namespace gpuenv::bench {

/// The median of the samples (the mean of the middle two for an even
/// count); nullopt for none. NaN samples are ignored.
std::optional<double> median(std::vector<double> samples);

/// work per second: work / seconds, nullopt unless seconds > 0.
std::optional<double> rate(double work, double seconds);

/// value as a percentage of peak; nullopt when peak is unknown or <= 0.
std::optional<double> percent_of_peak(std::optional<double> value, std::optional<double> peak);

/// nccl-tests' bus bandwidth of an all-reduce over n ranks:
/// algbw * 2(n-1)/n. For n < 2 there is no bus traffic: nullopt.
std::optional<double> allreduce_busbw(double algbw, int ranks);

/// The relative spread of the samples, (max - min) / median, to show how
/// steady the trials were; nullopt for fewer than two samples.
std::optional<double> spread(const std::vector<double>& samples);

/// FLOPs of an m x n x k GEMM: 2mnk.
double gemm_flops(long long m, long long n, long long k);

}  // namespace gpuenv::bench
