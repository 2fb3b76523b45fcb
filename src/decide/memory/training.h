// What plan-memory predicts for: a decoder-only transformer and how it
// trains. Filled from flags (the plain-PyTorch script's GPT-2 or Llama
// blocks) or from a Hugging Face config.json of one of the families in
// decide/memory/family.h (read here, parsed apart from any I/O), then
// validated.
#pragma once

#include <string>
#include <vector>

namespace gpuenv::memory {

struct Family;

enum class Arch { kGpt2, kLlama };
/// The MLP's activation as the model code writes it: gelu_new is GPT-2's
/// Python expression (each op saves its input), the others one op each.
enum class Activation { kSilu, kGelu, kGeluNew, kRelu };
enum class Precision { kFp32, kBf16Mixed, kFp16Mixed, kBf16 };
enum class Optimizer { kAdamW, kSgd, kAdafactor };
enum class Strategy { kDdp, kFsdp, kFsdpOffload };
/// Which scaled_dot_product_attention kernel runs: a fused one (flash,
/// memory-efficient, cuDNN: no T x T matrix) or the math fallback.
enum class Attention { kAuto, kFused, kMath };
/// What the training loop keeps of the model's outputs through backward:
/// the outputs themselves (nanoGPT's `logits, loss = model(X, Y)`,
/// accelerate's `outputs = model(**batch)`: the B x T x V logits stay
/// allocated until the next forward has returned), or only the loss
/// (Hugging Face Trainer's compute_loss, `model(...).loss`).
enum class Loop { kKeepsLogits, kFreesLogits };

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
  // Hugging Face families (family != nullptr); the plain script leaves these.
  const Family* family = nullptr;  // nullptr: tests/gpu/plan_memory_measure.py's blocks
  long long head_dim = 0;          // 0: hidden / heads
  bool qkv_bias = false, o_bias = false, mlp_bias = false;
  long long experts = 0, top_k = 0;  // a mixture of experts: per layer, and routed per token
  long long dense_layers = 0;        // MoE models' layers with a plain MLP (mlp_only_layers)
  double embd_dropout = 0, resid_dropout = 0, attn_dropout = 0;
  Activation act = Activation::kSilu;
  bool logit_softcap = false;      // final_logit_softcapping: tanh over B x T x V
  bool parallel_residual = false;  // gpt_neox: attention and MLP read the same input
  long long sliding_window = 0;    // 0: none
  double window_fraction = 1;      // of the layers, those with the sliding window (gemma: local)
  long long max_positions = 0;     // config's max_position_embeddings (for --seq's message)
  std::string model_type;          // as the config.json says (an unknown one planned as llama)
};

/// peft's LoRA: the base frozen in its dtype, rank-r adapters on the targets.
struct Lora {
  long long rank = 0;  // 0: full fine-tuning
  std::vector<std::string> targets = {"q", "v"};  // q, k, v, o, gate, up, down
  double dropout = 0.05;
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
  /// FSDP's MixedPrecision(param_dtype=bf16, reduce_dtype=bf16): fp32 shards,
  /// bf16 gathered parameters and compute, no autocast (fsdp strategies only).
  bool fsdp_bf16 = false;
  Lora lora;
  Loop loop = Loop::kKeepsLogits;  // the safe side: a kept B x T x V never fits by surprise
};

/// The defaults the measured training script applies (tests/gpu/
/// plan_memory_measure.py): kv_heads = heads, ffn 4D or 8D/3, tied for gpt2.
ModelShape with_defaults(ModelShape m);

/// Empty when the shape is possible; else what is wrong, naming the field
/// with `flag` spelling ("--heads 5 does not divide --hidden 768").
std::string shape_problem(const ModelShape& m, bool config_names = false);
/// The same for the training side (seq, batch, gpus) and the shape.
std::string training_problem(const Training& t, bool config_names = false);

/// Parses a Hugging Face config.json into *m (the families of family.h; an
/// unknown model_type with Llama's fields is read as llama and *warning says
/// so). False with *err naming the field on malformed JSON, an unknown family
/// without Llama's fields, or a missing, mistyped or impossible field.
bool shape_from_hf_config(const std::string& text, ModelShape* m, std::string* err,
                          std::string* warning = nullptr);

/// The head dimension (head_dim, else hidden / heads).
long long head_dim_of(const ModelShape& m);

/// Empty when `l` can be planned on `m`; else what is wrong.
std::string lora_problem(const ModelShape& m, const Lora& l);

/// The modules `l` adapts: its targets each once, in the order first named.
/// peft wraps a module once however often target_modules names it, so
/// "q,q,v" plans as "q,v".
std::vector<std::string> lora_modules(const Lora& l);

const char* arch_name(Arch a);
const char* precision_name(Precision p);
const char* optimizer_name(Optimizer o);
const char* strategy_name(Strategy s);
/// "keeps-logits" or "frees-logits", as the flags and the JSON spell them.
const char* loop_name(Loop l);

}  // namespace gpuenv::memory
