// The Hugging Face transformers families plan-memory models: how each one's
// modeling code lays out a decoder layer, in the terms that decide what
// autograd saves (decide/memory/saved.cc) and what the parameters are
// (decide/memory/estimate.cc). One row per model_type; each row names the
// modeling file it was read from (transformers 5.17) and was checked tensor
// by tensor against torch.autograd.graph.saved_tensors_hooks on the H200
// (tests/gpu/hf_memory_measure.py --probe; docs/memory.md).
#pragma once

#include <string>
#include <vector>

namespace gpuenv::memory {

/// Where the norms sit in a layer.
enum class Layout {
  kPreNorm,   // x + attn(norm(x)); h + mlp(norm(h))                 llama, mistral, qwen*, phi3
  kSandwich,  // x + norm(attn(norm(x))); h + norm(mlp(norm(h)))     gemma2, gemma3
  kPostNorm,  // x + norm(attn(x)); h + norm(mlp(h))                 olmo2
  kParallel,  // x + attn(norm1(x)) + mlp(norm2(x))                  gpt_neox (use_parallel_residual)
};

/// The norm module: LayerNorm (saves input, mean, rstd), RMSNorm computed in
/// fp32 whose normalised product is cast back before the weight (llama), or
/// kept in fp32 through the weight (gemma's (1 + w), olmo2).
enum class Norm { kLayerNorm, kRms, kRmsFp32 };

/// Norms on the projected queries and keys: none, per head (qwen3, gemma3)
/// or over the whole projection (olmo2).
enum class QkNorm { kNone, kPerHead, kFull };

/// Which copies of q, k, v and the attention output the family's code makes
/// around scaled_dot_product_attention (read from the probe).
enum class AttnCopies {
  kNone,         // q and k after RoPE, v as projected; o_proj reads the kernel's output
  kOutput16,     // and, in 16-bit, o_proj reads a contiguous copy of the output (phi3, gpt_neox)
  kGpt2,         // q, k, v are views of one c_attn output plus two contiguous copies
};

struct Family {
  const char* model_type;
  const char* modeling;  // transformers/models/.../modeling_*.py
  Layout layout;
  Norm norm;
  QkNorm qk_norm;
  AttnCopies copies;
  bool gated_mlp;        // gate/up/down (else fc, activation, proj)
  bool fused_qkv;        // one projection for q, k, v (gpt2, gpt_neox, phi3)
  bool fused_gate_up;    // phi3
  bool moe;              // experts replace the MLP (mixtral, qwen3_moe)
  bool learned_positions;  // gpt2's wpe
  bool qkv_bias_default;   // qwen2: q/k/v with bias
  bool tied_default;
  long long head_dim_default;  // 0: hidden / heads
  bool rope_upcast;  // RoPE multiplies bf16 q, k by fp32 cos/sin under autocast (olmo2 casts back)
};

/// The row for `model_type`, or nullptr.
const Family* find_family(const std::string& model_type);

/// The row an unknown model_type with Llama's fields is planned as.
const Family& llama_family();

/// Every model_type, for messages and docs.
std::vector<std::string> family_names();

}  // namespace gpuenv::memory
