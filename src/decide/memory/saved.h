// What autograd keeps for backward in a Hugging Face model's decoder layer and
// around its head, per token: the tensors
// torch.autograd.graph.saved_tensors_hooks sees during forward, deduplicated
// by storage, as each family's modeling code makes them (decide/memory/
// family.h; docs/memory.md derives every term). Pure arithmetic.
#pragma once

#include "decide/memory/training.h"

namespace gpuenv::memory {

/// The element sizes and modes the terms depend on.
struct SavedContext {
  double a = 4;         // activations: 4 fp32, 2 under autocast or pure bf16
  double r = 4;         // residual stream: 4 unless pure bf16
  bool mixed = false;   // autocast: Linears cast fp32 inputs to bf16 one by one
  bool frozen = false;  // LoRA: the base's weights need no gradient
  bool math = false;    // the math attention kernel (saves B x H x T x T)
  bool kv_expanded = false;  // a mask (sliding window shorter than T): repeat_kv, and the
                             // kernel saves the mask as a bias per layer
  double seq = 0;       // T, for the math kernel's matrix
};

/// Bytes per token one decoder layer saves (with its LoRA adapters).
double layer_saved_per_token(const ModelShape& m, const Lora& lora, const SavedContext& c);

/// Bytes per token saved outside the layers: embedding dropout, the final
/// norm, the lm_head's input.
double root_saved_per_token(const ModelShape& m, const SavedContext& c);

}  // namespace gpuenv::memory
