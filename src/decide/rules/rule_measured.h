// What gpuenv bench's stored figures say about the link between two GPUs,
// for the nccl rule (which owns NCCL_P2P_DISABLE). rule_measured.cc.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model/machine.h"

namespace gpuenv {

/// One phrase per measured pair of `visible` GPUs whose peer copy failed,
/// or ran slower than staging through host memory, citing the figures and
/// the date: "GPU 0->1 3.1 GB/s peer to peer against 24.5 GB/s through host
/// memory (2025-03-04)". Empty when nothing was measured or all is well.
std::vector<std::string> measured_p2p_problems(const Machine& m,
                                               const std::vector<const Gpu*>& visible);

/// What bench measured on the GPU `uuid` for fp32 GEMMs and the two ways
/// past the CUDA cores: TFLOP/s at the largest size measured, by precision
/// ("fp32", "tf32", "bf16"); a precision never measured (or failed) is left
/// out. For `gpuenv run`'s job record (JobContext::gemm_tflops).
std::map<std::string, double> measured_gemm_tflops(const Machine& m, const std::string& uuid);

}  // namespace gpuenv
