// `gpuenv run --tune=+precision` (docs/precision.md): whether bf16 autocast
// may be applied to a job on this machine's GPUs, and what this machine's
// measurements say it would gain, for the feedback that suggests it. Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/job.h"
#include "model/machine.h"
#include "model/plan.h"

namespace gpuenv {

/// "" when every GPU the job can see (the plan's CUDA_VISIBLE_DEVICES) has
/// bf16 tensor cores (cc 8.0+), else why --tune=+precision is refused: no
/// GPU, an unknown compute capability, or fp16-only tensor cores (fp16
/// needs loss scaling, which cannot be added safely from outside a script).
std::string bf16_autocast_refusal(const Machine& m, const Options& o);

/// A bf16 GEMM against the fp32 one the job would otherwise run, measured
/// by gpuenv bench on the job's GPUs.
struct Bf16Gain {
  double factor = 0;  // bf16 TFLOP/s over TF32's (or plain fp32's), the smallest over the GPUs
  std::string basis;  // "gemm_bf16_8192 over gemm_tf32_8192, measured 2026-12-02"
};

/// From m.measurements for the GPUs `uuids`: for each GPU, the largest size
/// with both gemm_bf16_N and gemm_tf32_N (gemm_fp32_N when `tf32` is
/// false) measured ok; nullopt when some GPU has no such pair.
std::optional<Bf16Gain> measured_bf16_gain(const Machine& m, const std::vector<std::string>& uuids, bool tf32);

/// For a busy job's fix: what --tune=+precision would give it (context's
/// bf16 fields, filled when it was recorded), never applied unasked. "" when
/// the job ran under it already, or its GPUs have no bf16.
std::string precision_suggestion(const JobContext& c);

}  // namespace gpuenv
