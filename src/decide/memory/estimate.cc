#include "decide/memory/estimate.h"

#include <algorithm>
#include <cmath>

#include "decide/memory/family.h"
#include "decide/memory/saved.h"

namespace gpuenv::memory {
namespace {

constexpr double kBlock = 512;  // the caching allocator rounds every block up to 512 B

// One parameter tensor: rows x cols (cols 0: a vector).
struct Tensor {
  double rows, cols;
  double numel() const { return cols > 0 ? rows * cols : rows; }
};

// The model's parameter tensors, and the sums the formulas use.
struct Inventory {
  std::vector<Tensor> tensors;
  double total = 0;
  double layer_weights = 0, layer_biases = 0;  // Linear weights/biases of one block
  double head = 0;                              // lm_head's V x D, tied or not
  double root = 0;  // what is not in a block: embeddings, final norm, untied head
  // LoRA: the adapters are what trains (fp32); without LoRA everything trains.
  std::vector<Tensor> adapters;
  double adapter_total = 0;
  bool lora = false;
  const std::vector<Tensor>& trained() const { return lora ? adapters : tensors; }
  double trained_total() const { return lora ? adapter_total : total; }
};

void add(Inventory* inv, double rows, double cols, int count = 1) {
  for (int i = 0; i < count; ++i) inv->tensors.push_back({rows, cols});
}

// The blocks' tensors (one block's, `layers` times).
void add_block(Inventory* inv, const ModelShape& m) {
  double d = m.hidden, f = m.ffn, k = double(m.kv_heads) * (m.hidden / m.heads);
  int n = int(m.layers);
  if (m.arch == Arch::kGpt2) {
    add(inv, d, 0, 4 * n);  // ln1, ln2: weight + bias
    add(inv, 3 * d, d, n), add(inv, 3 * d, 0, n);
    add(inv, d, d, n), add(inv, d, 0, n);
    add(inv, f, d, n), add(inv, f, 0, n);
    add(inv, d, f, n), add(inv, d, 0, n);
    inv->layer_weights = 4 * d * d + 2 * d * f;
    inv->layer_biases = 5 * d + f;
  } else {
    add(inv, d, 0, 2 * n);  // two RMSNorms
    add(inv, d, d, 2 * n);  // q, o
    add(inv, k, d, 2 * n);  // k, v
    add(inv, f, d, 2 * n);  // gate, up
    add(inv, d, f, n);      // down
    inv->layer_weights = 2 * d * d + 2 * d * k + 3 * d * f;
  }
}

// A Hugging Face layer's parameters, as its modeling code declares them.
void add_hf_block(Inventory* inv, const ModelShape& m) {
  const Family& f = *m.family;
  double d = double(m.hidden), hd = double(head_dim_of(m)), q = double(m.heads) * hd;
  double k = double(m.kv_heads ? m.kv_heads : m.heads) * hd, ff = double(m.ffn);
  int n = int(m.layers);
  bool ln = f.norm == Norm::kLayerNorm;
  int norms = f.layout == Layout::kSandwich ? 4 : 2;
  add(inv, d, 0, (ln ? 2 : 1) * norms * n);
  if (f.qk_norm == QkNorm::kPerHead) add(inv, hd, 0, 2 * n);
  if (f.qk_norm == QkNorm::kFull) add(inv, q, 0, n), add(inv, k, 0, n);
  double attn = 2 * d * q + 2 * d * k, biases = 0;
  if (f.fused_qkv) {
    add(inv, q + 2 * k, d, n);
  } else {
    add(inv, q, d, n), add(inv, k, d, 2 * n);
  }
  if (m.qkv_bias) add(inv, q + 2 * k, 0, n), biases += q + 2 * k;
  add(inv, d, q, n);
  if (m.o_bias) add(inv, d, 0, n), biases += d;
  double mlp = 0;
  if (f.moe) {
    double e = double(m.experts);
    add(inv, e, d, n);                                // router
    add(inv, e * 2 * ff, d, n), add(inv, e * d, ff, n);  // experts' gate_up and down (3-D)
    mlp = e * d;  // only the router is a Linear that autocast casts
  } else if (f.gated_mlp) {
    if (f.fused_gate_up) add(inv, 2 * ff, d, n); else add(inv, ff, d, 2 * n);
    add(inv, d, ff, n);
    mlp = 3 * d * ff;
    if (m.mlp_bias) add(inv, 2 * ff + d, 0, n), biases += 2 * ff + d;
  } else {
    add(inv, ff, d, n), add(inv, d, ff, n);
    mlp = 2 * d * ff;
    if (m.mlp_bias) add(inv, ff, 0, n), add(inv, d, 0, n), biases += ff + d;
  }
  inv->layer_weights = attn + mlp;
  inv->layer_biases = biases;
}

// LoRA's adapters: A (r x in) and B (out x r) per target and layer.
void add_adapters(Inventory* inv, const ModelShape& m, const Lora& l) {
  if (l.rank == 0) return;
  double d = double(m.hidden), hd = double(head_dim_of(m)), q = double(m.heads) * hd;
  double k = double(m.kv_heads ? m.kv_heads : m.heads) * hd, ff = double(m.ffn), r = double(l.rank);
  for (const auto& t : lora_modules(l)) {
    double in = t == "o" ? q : t == "down" ? ff : d;
    double out = t == "q" ? q : t == "k" || t == "v" ? k : t == "gate" || t == "up" ? ff : d;
    for (long long i = 0; i < m.layers; ++i) inv->adapters.push_back({r, in}), inv->adapters.push_back({out, r});
  }
  for (const auto& t : inv->adapters) inv->adapter_total += t.numel();
  inv->lora = true;
}

Inventory hf_inventory(const ModelShape& m, const Lora& l) {
  const Family& f = *m.family;
  Inventory inv;
  double d = double(m.hidden), v = double(m.vocab);
  add(&inv, v, d);
  if (f.learned_positions) add(&inv, double(m.positions), d);
  add(&inv, d, 0, f.norm == Norm::kLayerNorm ? 2 : 1);  // final norm
  if (!m.tied) add(&inv, v, d);
  for (const auto& t : inv.tensors) inv.root += t.numel();
  add_hf_block(&inv, m);
  for (const auto& t : inv.tensors) inv.total += t.numel();
  inv.head = v * d;
  add_adapters(&inv, m, l);
  return inv;
}

Inventory inventory(const ModelShape& given, long long seq, const Lora& lora = {}) {
  ModelShape m = with_defaults(given);
  if (m.family) return hf_inventory(m, lora);
  Inventory inv;
  double d = m.hidden, v = m.vocab;
  add(&inv, v, d);
  if (m.arch == Arch::kGpt2) add(&inv, double(m.positions ? m.positions : seq), d);
  add(&inv, d, 0, m.arch == Arch::kGpt2 ? 2 : 1);  // final norm
  if (!m.tied) add(&inv, v, d);
  for (const auto& t : inv.tensors) inv.root += t.numel();
  add_block(&inv, m);
  for (const auto& t : inv.tensors) inv.total += t.numel();
  inv.head = v * d;
  return inv;
}

// Element sizes: parameters (w), activations and matmuls (a), the residual
// stream and norms (r: fp32 under autocast, as embeddings and adds are fp32).
struct Sizes {
  double w, a, r;
  bool mixed;
};

Sizes sizes(Precision p) {
  switch (p) {
    case Precision::kFp32: return {4, 4, 4, false};
    case Precision::kBf16Mixed:
    case Precision::kFp16Mixed: return {4, 2, 4, true};
    case Precision::kBf16: return {2, 2, 2, false};
  }
  return {4, 4, 4, false};
}

// Resolves kAuto as PyTorch's SDPA dispatch does (sdp_utils.cpp): flash for
// 16-bit on sm80+, head dim <= 256 and a multiple of 8, grouped heads
// allowed; the memory-efficient kernel for fp32 (and 16-bit) with a head
// dim multiple of 8 but equal key/value and query heads; else math.
// Hugging Face's sdpa attention passes enable_gqa (no mask) or repeats the
// key/value heads (a mask: a sliding window shorter than the sequence), so a
// mask rules flash out and lets the memory-efficient kernel take grouped
// heads. In fp32 with grouped heads and no mask no fused kernel takes
// enable_gqa: the math kernel runs (measured on the H200 for every GQA family).
Attention resolve(const Training& t, const GpuTraits& g, std::string* why) {
  ModelShape m = with_defaults(t.model);
  long long hd = head_dim_of(m);
  bool half = t.precision != Precision::kFp32 || t.fsdp_bf16;
  bool gqa = m.kv_heads != m.heads;
  bool masked = m.family && m.sliding_window > 0 && t.seq > m.sliding_window;
  if (t.attention != Attention::kAuto) {
    *why = t.attention == Attention::kFused ? "fused kernel (as asked: --attention fused)"
                                            : "math kernel (as asked: --attention math)";
    return t.attention;
  }
  if (hd % 8 == 0 && half && g.cc_major >= 8 && hd <= 256 && !masked) {
    *why = "flash attention (16-bit, head dim " + std::to_string(hd) + "): no T x T matrix";
    return Attention::kFused;
  }
  if (hd % 8 == 0 && (!gqa || masked) && (t.precision != Precision::kBf16 || g.cc_major >= 8)) {
    *why = "memory-efficient attention (head dim " + std::to_string(hd) + ")" +
           (masked ? ", with the sliding-window mask and key/value heads repeated" : "") +
           ": no T x T matrix";
    return Attention::kFused;
  }
  *why = gqa && !half ? std::string("math kernel: fp32 with grouped key/value heads") +
                            (m.family ? " (enable_gqa)" : "") +
                            " has no fused kernel; it saves the B x H x T x T attention matrix per layer"
                      : "math kernel: no fused kernel takes this shape; it saves the B x H x T x T "
                        "attention matrix per layer";
  return Attention::kMath;
}

// What the model is, in the units the formulas use.
struct Dims {
  double n, d, k, f, v, h, b, t;
};

Dims dims(const Training& t) {
  ModelShape m = with_defaults(t.model);
  double hd = double(head_dim_of(m));
  return {double(t.batch) * t.seq, double(m.hidden), m.kv_heads * hd, double(m.ffn),
          double(m.vocab), double(m.heads), double(t.batch), double(t.seq)};
}

// What one block saves for backward (autograd's saved tensors), per the ops
// of tests/gpu/plan_memory_measure.py; docs/memory.md derives each term.
SavedContext saved_context(const Training& t, const Sizes& s, Attention attn) {
  SavedContext c;
  c.a = s.a, c.r = s.r, c.mixed = s.mixed, c.frozen = t.lora.rank > 0;
  c.math = attn == Attention::kMath;
  c.kv_expanded = t.model.sliding_window > 0 && t.seq > t.model.sliding_window;
  c.seq = double(t.seq);
  return c;
}

double block_saved(const Training& t, const Sizes& s, Attention attn) {
  Dims x = dims(t);
  if (t.model.family)
    return x.n * layer_saved_per_token(with_defaults(t.model), t.lora, saved_context(t, s, attn));
  double nd = x.n * x.d, nf = x.n * x.f, nk = x.n * x.k;
  double scores = attn == Attention::kMath ? s.a * x.b * x.h * x.t * x.t : 0;
  double lse = attn == Attention::kMath ? 0 : 4 * x.b * x.h * std::ceil(x.t / 32) * 32;
  if (t.model.arch == Arch::kGpt2) {
    // 2 LayerNorm inputs (r) + stats, their outputs as the Linears' inputs,
    // q/k/v (one qkv output), attention output, GELU input and output.
    return 2 * s.r * nd + 16 * x.n + 2 * s.a * nd + 3 * s.a * nd + s.a * nd + 2 * s.a * nf +
           scores + lse;
  }
  // Two RMSNorms save input (shared with the residual) + x*rsqrt + rsqrt;
  // under autocast each Linear casts the norm's fp32 output again (q, k, v;
  // gate, up). Fused attention saves its q, k, v and output; math saves q,
  // k and v expanded to all heads, the scores, and a copy of its output.
  double h1 = s.mixed ? 3 * 2 * nd : s.a * nd;
  double h2 = s.mixed ? 2 * 2 * nd : s.a * nd;
  double qkv = attn == Attention::kMath ? 3 * s.a * nd : s.a * (nd + 2 * nk);
  return 4 * s.r * nd + 2 * s.r * x.n + h1 + h2 + qkv + s.a * nd + 4 * s.a * nf + scores + lse;
}

// The final norm's saved tensors and the lm_head's input.
double final_saved(const Training& t, const Sizes& s) {
  Dims x = dims(t);
  if (t.model.family)
    return x.n * root_saved_per_token(with_defaults(t.model), saved_context(t, s, Attention::kFused));
  double nd = x.n * x.d;
  return t.model.arch == Arch::kGpt2 ? s.r * nd + 8 * x.n + s.a * nd
                                     : 2 * s.r * nd + s.r * x.n + s.a * nd;
}

double state_bytes(const Training& t, const Inventory& inv, double w) {
  switch (t.optimizer) {
    case Optimizer::kAdamW:
      return 2 * w * inv.trained_total() + (t.fused_optimizer ? kBlock * inv.trained().size() : 0);
    case Optimizer::kSgd: return w * inv.trained_total();  // momentum buffer
    case Optimizer::kAdafactor: {
      double n = 0;  // factored second moments: a row and a column per matrix
      for (const auto& x : inv.trained()) n += x.cols > 0 ? x.rows + x.cols : x.rows;
      return w * n;
    }
  }
  return 0;
}

// The optimizer step's own allocations: foreach AdamW's sqrt of exp_avg_sq
// (one state's size); fused AdamW and SGD work in place; Adafactor builds
// the full-size estimate and update of its largest tensor.
double step_temporaries(const Training& t, const Inventory& inv, double w) {
  if (t.optimizer == Optimizer::kAdamW) return t.fused_optimizer ? 0 : w * inv.trained_total();
  if (t.optimizer == Optimizer::kSgd) return 0;
  double largest = 0;
  for (const auto& x : inv.trained()) largest = std::max(largest, x.numel());
  return 2 * w * largest;
}

// Whether the logits a model returns are its fp32 upcast (transformers'
// older `logits = logits.float()` in forward) rather than the compute-dtype
// ones: assumed not (the plain script and ForCausalLMLoss upcast inside the
// loss), to be calibrated against the H200 (issue 40).
constexpr bool kReturnsUpcastLogits = false;

// The logits a loop that keeps the model's outputs holds: B x T x V in the
// compute dtype, and the fp32 copy beside them where the model returns it.
double loop_held_logits(const Training& t, double a, double nv) {
  if (t.loop != Loop::kKeepsLogits) return 0;
  double upcast = kReturnsUpcastLogits && a < 4 ? 4 * nv : 0;
  return a * nv + upcast;
}

double rounding(const Inventory& inv, double elem) {
  double extra = 0;
  for (const auto& x : inv.trained()) {
    double b = x.numel() * elem;
    extra += std::ceil(b / kBlock) * kBlock - b;
  }
  return extra;
}

// Everything the phases share, computed once.
struct Terms {
  double weights, grads, states, step_tmp, buckets;
  double cast_all, cast_saved, cast_block, cast_head;  // autocast's bf16 weight copies
  double gathered, unsharded_grads;         // FSDP's per-unit full tensors
  double acts, acts_last_block, final, data, head_grad, grad_flow, backward_scores;
  double logits_fwd, logits_bwd, embedding_grad, overhead;
  double held_logits;  // what a loop that keeps the outputs holds, in every phase
  double kv_cache;  // alive through forward only
  bool checkpointing;
};

Terms terms(const Training& t, const GpuTraits& g, const Inventory& inv, Attention attn) {
  Sizes s = sizes(t.precision);
  // FSDP MixedPrecision: fp32 shards, the forward and backward in bf16 as a
  // pure bf16 model would run them.
  Sizes compute = t.fsdp_bf16 ? sizes(Precision::kBf16) : s;
  Dims x = dims(t);
  ModelShape m = with_defaults(t.model);
  double shard = t.strategy == Strategy::kDdp ? 1 : double(t.gpus);
  bool offload = t.strategy == Strategy::kFsdpOffload;
  double block = inv.layer_weights + inv.layer_biases;
  Terms r{};
  r.checkpointing = t.checkpointing;
  // LoRA trains fp32 adapters (peft's autocast_adapter_dtype) over a frozen base.
  double tw = inv.lora ? 4 : s.w;
  r.weights = offload ? 0 : (s.w * inv.total + 4 * inv.adapter_total) / shard;
  if (m.arch == Arch::kLlama) r.weights += 2 * x.t * (x.d / x.h) * s.w;  // cos, sin buffers
  r.grads = offload ? 0 : tw * inv.trained_total() / shard;
  r.states = offload ? 0 : state_bytes(t, inv, tw) / shard;
  r.step_tmp = offload ? 0 : step_temporaries(t, inv, tw) / shard;
  r.buckets = t.strategy == Strategy::kDdp && t.gpus > 1 ? tw * inv.trained_total() : 0;
  if (s.mixed) {
    r.cast_all = 2 * (m.layers * block + inv.head);
    // Checkpointed blocks save nothing: only the lm_head's copy is kept
    // once autocast's cache is cleared at the end of forward.
    r.cast_saved = t.checkpointing ? 2 * inv.head : 2 * (m.layers * inv.layer_weights + inv.head);
    r.cast_block = 2 * block;
    r.cast_head = 2 * inv.head;
  }
  if (t.strategy != Strategy::kDdp) {
    r.gathered = compute.w * (inv.root + 2 * block);  // the root unit and two blocks (prefetch)
    r.unsharded_grads = compute.w * block;
  }
  double saved = block_saved(t, compute, attn), input = compute.r * x.n * x.d;
  // Some layers with the sliding window, the rest without (gemma): a mix of
  // the two, each with the kernel it gets.
  bool windowed = m.family && m.sliding_window > 0 && t.seq > m.sliding_window;
  if (windowed && m.window_fraction < 1) {
    Training global = t;
    global.model.sliding_window = 0;
    std::string why;
    Attention global_attn = t.attention == Attention::kAuto ? resolve(global, g, &why) : t.attention;
    double f = m.window_fraction;
    saved = f * saved + (1 - f) * block_saved(global, s, global_attn);
    if (global_attn == Attention::kMath) attn = Attention::kMath;  // for the backward scores
  }
  r.acts = m.layers * (t.checkpointing ? input : saved);
  r.acts_last_block = t.checkpointing ? saved - input : 0;  // recomputed in backward
  r.final = final_saved(t, compute);
  r.data = 2 * 8 * x.n;  // int64 tokens and targets
  r.head_grad = offload || inv.lora ? 0 : s.w * inv.head / shard;
  r.grad_flow = compute.r * x.n * x.d;
  r.backward_scores = attn == Attention::kMath ? 2 * compute.a * x.b * x.h * x.t * x.t : 0;
  double nv = x.n * x.v;
  r.logits_fwd = compute.a * nv + (compute.a < 4 ? 4 * nv : 0) + 4 * nv;
  r.logits_bwd = 12 * nv;
  // transformers trains with use_cache on unless checkpointing turns it off:
  // the returned DynamicCache holds a copy of each layer's keys and values
  // until the output is dropped after the loss, in the keys' dtype: fp32
  // under autocast when RoPE multiplied by fp32 cos/sin (measured on
  // gpt_neox and phi3, whose forward is the peak).
  if (m.family && !t.checkpointing)
    r.kv_cache = (m.family->rope_upcast && s.mixed ? 4 : compute.a) * 2 * x.n * x.k * double(m.layers);
  if (m.logit_softcap) {  // logits / cap, tanh (its output saved), * cap: one more B x T x V
    r.logits_fwd += s.a * nv;
    r.logits_bwd += s.a * nv;
  }
  r.held_logits = loop_held_logits(t, compute.a, nv);
  r.embedding_grad = m.tied && !offload && !inv.lora ? s.w * inv.head / shard : 0;
  double workspace = g.cc_major >= 9 ? 32.0 * 1024 * 1024 : (4096.0 * 2 + 16 * 8) * 1024;
  r.overhead = 2 * workspace + (offload ? 0 : 3 * rounding(inv, tw) / shard);
  return r;
}

Phase phase(const char* name, const char* what, Breakdown b) { return {name, what, b}; }

std::vector<Phase> phases(const Terms& r) {
  double acts = r.acts + r.data;
  std::vector<Phase> out;
  out.push_back(phase("forward_at_loss",
                      "end of forward: every saved activation, the logits, their fp32 copy and "
                      "log_softmax's output; autocast's weight copies still cached",
                      {r.weights, r.buckets, r.states, acts + r.final + r.kv_cache, r.logits_fwd,
                       r.cast_all + r.gathered, r.overhead}));
  out.push_back(phase("backward_at_loss",
                      "start of backward: log_softmax's output, its gradient and nll_loss's "
                      "gradient (fp32 B x T x V each) over every saved activation",
                      {r.weights, r.buckets, r.states, acts + r.final, r.logits_bwd,
                       r.cast_saved + r.gathered, r.overhead}));
  out.push_back(phase("backward_last_block",
                      "backward through the last block (recomputed under checkpointing), the "
                      "lm_head's gradient already allocated",
                      {r.weights, r.buckets + r.head_grad, r.states,
                       acts + r.acts_last_block + r.grad_flow, 0,
                       (r.checkpointing ? r.cast_block : r.cast_saved - r.cast_head) +
                           r.backward_scores + r.gathered + r.unsharded_grads,
                       r.overhead}));
  out.push_back(phase("optimizer_step",
                      "optimizer step: weights, gradients, states and the step's temporaries",
                      {r.weights, r.grads + r.buckets, r.states, r.data, 0, r.step_tmp,
                       r.overhead}));
  if (r.embedding_grad > 0)
    out.push_back(phase("backward_embedding",
                        "end of backward: the tied embedding's second gradient before it is "
                        "added to the lm_head's",
                        {r.weights, r.grads + r.buckets, r.states, r.data, 0,
                         r.embedding_grad + r.gathered + r.unsharded_grads, r.overhead}));
  for (auto& p : out) p.bytes.held_logits = r.held_logits;
  return out;
}

}  // namespace

double parameter_count(const ModelShape& m, long long seq) { return inventory(m, seq).total; }

Estimate estimate(const Training& t, const GpuTraits& gpu) {
  Estimate e;
  Inventory inv = inventory(t.model, t.seq, t.lora);
  e.parameters = inv.total + inv.adapter_total;
  e.trainable = inv.trained_total();
  e.attention = resolve(t, gpu, &e.attention_reason);
  e.phases = phases(terms(t, gpu, inv, e.attention));
  for (size_t i = 1; i < e.phases.size(); ++i)
    if (e.phases[i].bytes.total() > e.phases[e.peak].bytes.total()) e.peak = i;
  return e;
}

}  // namespace gpuenv::memory
