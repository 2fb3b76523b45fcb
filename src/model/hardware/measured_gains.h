// Speed-ups that gpuenv's own runs measured on real GPUs. Each row's home
// is docs/performance.md (the command, the machine, the date, the table);
// measured_gains_test.cc reads the figures back from there. A rule cites a
// row only where every visible GPU is the model it was measured on.
#pragma once

#include <string>
#include <string_view>

namespace gpuenv {

/// One measurement: a workload's throughput without and with a setting.
struct MeasuredGain {
  std::string_view gpu;       // the GPU it ran on, as NVML names it
  std::string_view workload;  // "an fp32 GPT-2-small training loop on one H200"
  double before = 0;          // throughput without the setting
  double after = 0;           // and with it
  std::string_view unit;      // of the throughput: "tokens/s"
};

/// TF32 for fp32 matmuls (TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1):
/// docs/performance.md, "TF32: the fp32 GPT-2-small training loop".
inline constexpr MeasuredGain kTf32Gains[] = {
    {"NVIDIA H200", "an fp32 GPT-2-small training loop on one H200", 51976, 150749, "tokens/s"},
};

/// "2.9x for WORKLOAD (52.0k -> 150.7k UNIT)": the ratio after/before and
/// both throughputs in thousands, one decimal each.
std::string describe(const MeasuredGain& g);

}  // namespace gpuenv
