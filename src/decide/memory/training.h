// What plan-memory predicts for: a decoder-only transformer (GPT-2 or Llama
// style) and how it trains. Filled from flags or from a Hugging Face
// config.json (read here, parsed apart from any I/O), then validated.
#pragma once

#include <string>

namespace gpuenv::memory {

enum class Arch { kGpt2, kLlama };
enum class Precision { kFp32, kBf16Mixed, kFp16Mixed, kBf16 };
enum class Optimizer { kAdamW, kSgd, kAdafactor };
enum class Strategy { kDdp, kFsdp, kFsdpOffload };
/// Which scaled_dot_product_attention kernel runs: a fused one (flash,
/// memory-efficient, cuDNN: no T x T matrix) or the math fallback.
enum class Attention { kAuto, kFused, kMath };

/// The model's shape. Sizes are counts (int64: products never overflow in
/// double arithmetic below 2^53).
struct ModelShape {
  Arch arch = Arch::kGpt2;
  long long hidden = 0, layers = 0, heads = 0;
  long long kv_heads = 0;   // 0: = heads
  long long ffn = 0;        // 0: 4 * hidden (gpt2), hidden * 8 / 3 (llama)
  long long vocab = 0;
  long long positions = 0;  // gpt2's learned positions; 0: = seq
  int tied = -1;            // -1: gpt2 tied, llama untied
};

struct Training {
  ModelShape model;
  long long seq = 0, batch = 0;
  Precision precision = Precision::kFp32;
  Optimizer optimizer = Optimizer::kAdamW;
  bool fused_optimizer = false;
  bool checkpointing = false;
  long long gpus = 1;
  Strategy strategy = Strategy::kDdp;
  Attention attention = Attention::kAuto;
};

/// The defaults the measured training script applies (tests/gpu/
/// plan_memory_measure.py): kv_heads = heads, ffn 4D or 8D/3, tied for gpt2.
ModelShape with_defaults(ModelShape m);

/// Empty when the shape is possible; else what is wrong, naming the field
/// with `flag` spelling ("--heads 5 does not divide --hidden 768").
std::string shape_problem(const ModelShape& m, bool config_names = false);
/// The same for the training side (seq, batch, gpus) and the shape.
std::string training_problem(const Training& t, bool config_names = false);

/// Parses a Hugging Face config.json (model_type gpt2 or llama) into *m.
/// False with *err naming the field on malformed JSON, another family, or
/// a missing, mistyped or impossible field.
bool shape_from_hf_config(const std::string& text, ModelShape* m, std::string* err);

const char* arch_name(Arch a);
const char* precision_name(Precision p);
const char* optimizer_name(Optimizer o);
const char* strategy_name(Strategy s);

}  // namespace gpuenv::memory
