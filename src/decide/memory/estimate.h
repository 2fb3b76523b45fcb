// The predicted torch.cuda.max_memory_allocated() of a training step: the
// largest of the phases where memory peaks (end of forward at the loss,
// backward at the loss, backward through the last block, the optimizer step,
// the tied embedding's gradient), each split into components, plus the
// logits the loop holds when it keeps the model's outputs.
// Formulas and sources: docs/memory.md.
#pragma once

#include <string>
#include <vector>

#include "decide/memory/training.h"

namespace gpuenv::memory {

/// Bytes of one phase, by what holds them. held_logits is the B x T x V
/// logits a loop that keeps the model's outputs holds (Loop::kKeepsLogits):
/// in every phase, the forward's too, as the previous step's outputs are
/// dropped only when the next forward returns.
struct Breakdown {
  double weights = 0, gradients = 0, optimizer_states = 0, activations = 0, logits_loss = 0,
         temporaries = 0, allocator_overhead = 0, held_logits = 0;
  double total() const {
    return weights + gradients + optimizer_states + activations + logits_loss + temporaries +
           allocator_overhead + held_logits;
  }
};

struct Phase {
  std::string name;  // "backward_at_loss", ...
  std::string what;  // one line on what is alive then
  Breakdown bytes;
};

/// What the GPU decides about kernels: flash attention and the memory-
/// efficient kernel's dtypes need compute capability 8.0; cuBLAS's workspace
/// is 32 MiB from 9.0 on. Unknown GPUs are taken as 9.0.
struct GpuTraits {
  int cc_major = 9;
};

struct Estimate {
  double parameters = 0;  // with LoRA's adapters
  double trainable = 0;   // what the optimizer updates
  Attention attention = Attention::kFused;  // resolved: kFused or kMath
  std::string attention_reason;
  std::vector<Phase> phases;
  size_t peak = 0;  // index of the largest phase
  const Phase& peak_phase() const { return phases[peak]; }
  double peak_bytes() const { return phases[peak].bytes.total(); }
};

/// Pure arithmetic; `t` must have passed training_problem().
Estimate estimate(const Training& t, const GpuTraits& gpu);

/// The parameter count alone (embeddings, blocks, norms, untied head).
double parameter_count(const ModelShape& m, long long seq);

}  // namespace gpuenv::memory
