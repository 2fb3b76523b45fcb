// plan-memory's decision: the estimate for the smallest visible GPU, whether
// it fits with a margin, the largest batch that fits, and when it does not
// fit the cheaper changes in order, each with its predicted peak and cost.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "decide/memory/estimate.h"
#include "model/machine.h"
#include "model/plan.h"

namespace gpuenv::memory {

/// What the memory budget leaves out of the GPU's total (docs/memory.md).
inline constexpr double kContextBytes = 1024.0 * 1024 * 1024;  // driver-reserved + CUDA context
inline constexpr double kNcclBytes = 1024.0 * 1024 * 1024;    // NCCL buffers, gpus > 1
inline constexpr double kAllocatorReserve = 0.05;  // reserved beyond allocated (fragmentation)

struct Change {
  std::string change;  // "bf16-mixed", "checkpointing", "fsdp over 8 GPUs", ...
  Training training;   // the setup with this change and the ones before it
  double peak_bytes = 0;
  bool fits = false;
  std::string cost;
};

struct GpuBudget {
  std::string name;
  double total_bytes = 0;
  int visible = 0;       // GPUs (or MIG devices) CUDA will see
  double budget_bytes = 0;  // what the peak may reach
};

/// The caching allocator the run will have: with expandable segments
/// (PYTORCH_ALLOC_CONF=expandable_segments:True, which gpuenv's plan sets)
/// freed memory is reused in place; without, a freed block of the largest
/// transient size (an fp32 B x T x V logits gradient, 4·B·T·V bytes) can stay
/// reserved and unusable for the next one (measured on the H200: 14.6 GiB
/// stranded when 15.7 GiB was asked for; docs/memory.md).
struct AllocatorPlan {
  bool expandable_segments = false;
  std::string source;     // "PYTORCH_ALLOC_CONF=... (gpuenv's plan)", "(yours)", "not set"
  double stranded_bytes = 0;  // counted against the budget beyond the peak
  bool from_gpuenv = false;   // gpuenv's plan sets it: a run outside gpuenv run has PyTorch's default
};

/// Expandable segments in `o`'s environment or in gpuenv's plan for `m`.
AllocatorPlan allocator_plan(const Machine& m, const Options& o);

/// What the default allocator may strand for `t`: 4·B·T·V (0 with expandable segments).
double stranded_bytes(const Training& t, bool expandable_segments);

struct MemoryPlan {
  Training training;
  Estimate estimate;
  AllocatorPlan allocator;
  std::optional<GpuBudget> gpu;  // nullopt: no GPU visible, fit not judged
  std::optional<bool> fits;
  double margin_bytes = 0;               // budget - peak (negative: short by)
  std::optional<long long> largest_batch;  // 0: not even batch 1
  std::vector<Change> advice;            // empty when it fits
  std::vector<std::string> notes;
  bool loop_assumed = false;  // training.loop is the default, not asked for
};

/// The budget of one GPU of `total` bytes: total less the context (and
/// NCCL's buffers when training on several), less the allocator's reserve.
double budget_for(double total_bytes, long long gpus);

/// Plans `t` (valid: training_problem() empty) for the visible GPUs of `m`.
MemoryPlan plan_memory(const Machine& m, const Options& o, const Training& t);

/// The largest batch whose peak (plus what the allocator strands) stays
/// within `budget` (0 if none).
long long largest_batch(const Training& t, const GpuTraits& g, double budget, bool expandable_segments = true);

}  // namespace gpuenv::memory
