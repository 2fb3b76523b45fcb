#include "decide/memory/saved.h"

#include "decide/memory/family.h"

namespace gpuenv::memory {
namespace {

// The widths a layer works in, per token.
struct Widths {
  double d, q, k, f, h, kv, e, topk;
};

Widths widths(const ModelShape& m, const SavedContext& c) {
  double hd = double(head_dim_of(m)), kv = double(m.kv_heads ? m.kv_heads : m.heads);
  double k = (c.kv_expanded ? double(m.heads) : kv) * hd;
  return {double(m.hidden), double(m.heads) * hd, k, double(m.ffn), double(m.heads), kv,
          double(m.experts), double(m.top_k)};
}

// A norm over `w` features of an input of `in` bytes, `groups` statistics.
// LayerNorm saves its input, mean and rstd. RMSNorm upcasts to fp32 (the
// input itself when already fp32), which pow and mul save, plus rstd, and
// the normalised tensor the weight multiplies: cast back to the input's
// dtype (llama) or still fp32 (gemma's 1 + w, olmo2). A frozen weight needs
// no normalised tensor.
double norm(Norm kind, double in, double w, double groups, bool frozen) {
  if (kind == Norm::kLayerNorm) return in * w + 8 * groups;
  double normed = kind == Norm::kRmsFp32 || in == 4 ? 4 : 2;
  return 4 * w + 4 * groups + (frozen ? 0 : normed * w);
}

// The dtype a norm hands on: LayerNorm runs in fp32 under autocast; RMSNorm
// returns its input's dtype.
double norm_out(Norm kind, double in, const SavedContext& c) {
  return kind == Norm::kLayerNorm ? (c.r == 2 ? 2 : 4) : in;
}

// What `consumers` Linears reading one input of `src` bytes save: the input
// once, or under autocast each its own bf16 cast of an fp32 input; nothing
// when their weights are frozen.
double linear_in(double src, double w, int consumers, const SavedContext& c) {
  if (c.frozen) return 0;
  if (c.mixed && src == 4) return 2 * w * consumers;
  return src * w;
}

double qk_norms(const Family& f, const Widths& x, const SavedContext& c) {
  if (f.qk_norm == QkNorm::kNone) return 0;
  if (f.qk_norm == QkNorm::kFull)
    return norm(Norm::kRmsFp32, c.a, x.q, 1, c.frozen) + norm(Norm::kRmsFp32, c.a, x.k, 1, c.frozen);
  return norm(f.norm, c.a, x.q, x.h, c.frozen) + norm(f.norm, c.a, x.k, x.kv, c.frozen);
}

// scaled_dot_product_attention and the copies around it. Flash and the
// memory-efficient kernel save q, k, v, the output and an fp32 logsumexp per
// head; the math kernel saves q, k and v expanded to every head, the
// softmax (H x T per token) and o_proj reads a copy of its output.
// With a mask the memory-efficient kernel saves it as an additive bias, one
// B x 1 x T x T storage (viewed per head in fp32).
double attention(const Family& f, const Widths& x, const SavedContext& c) {
  if (c.math) return c.a * 3 * x.q + c.a * x.h * c.seq + c.a * x.q;
  double core = c.a * (x.q + 2 * x.k) + c.a * x.q + 4 * x.h;
  if (c.kv_expanded) core += c.a * c.seq;
  switch (f.copies) {
    case AttnCopies::kNone: return core;
    case AttnCopies::kOutput16: return core + (c.a == 2 ? c.a * x.q : 0);
    case AttnCopies::kGpt2: return core + 2 * c.a * x.q;
  }
  return core;
}

// GPT-2's gelu_new is a Python expression: pow (autocast runs it in fp32 on
// an fp32 copy), tanh, 0.5 * x and 1 + tanh are each saved; one-op
// activations save their input.
double activation(Activation act, const Widths& x, const SavedContext& c) {
  if (act == Activation::kGeluNew) return (c.mixed ? 14 : 4 * c.a) * x.f;
  return c.a * x.f;
}

// Experts (mixtral, qwen3_moe): the router's input, its softmax, top-k and
// their indices; each routed token's gathered input, gate_up output, SiLU and
// product, and the expert's output the routing weight multiplies. The
// experts' matmuls are not autocast: fp32 unless the model is bf16.
double experts(const Widths& x, double h, const SavedContext& c) {
  double ae = c.r == 2 ? 2 : 4;
  return linear_in(h, x.d, 1, c) + 4 * x.e + 41 * x.topk + 4 + ae * x.topk * (2 * x.d + 4 * x.f);
}

double mlp(const Family& f, const ModelShape& m, const Widths& x, double h, const SavedContext& c) {
  if (f.moe) return experts(x, h, c);
  if (f.gated_mlp)
    return linear_in(h, x.d, f.fused_gate_up ? 1 : 2, c) + (c.frozen ? 3 : 4) * c.a * x.f;
  return linear_in(h, x.d, 1, c) + activation(m.act, x, c) + (c.frozen ? 0 : c.a * x.f);
}

// peft's LoRA on one target reading `w_in` features: lora_dropout's mask,
// lora_A's input (fp32 adapters: the input cast to fp32, or under autocast
// to bf16 again) and lora_B's rank-r input. Without dropout, fp32 targets on
// one input share it.
double lora_target(double w_in, const Lora& l, const SavedContext& c, bool first_on_input) {
  double ad = c.mixed ? 2 : 4, rank = double(l.rank);
  if (l.dropout > 0) return w_in + ad * w_in + ad * rank;
  bool shared = !c.mixed && c.r == 4;
  return (shared && !first_on_input ? 0 : ad * w_in) + ad * rank;
}

double lora_terms(const Lora& l, const Widths& x, const SavedContext& c) {
  if (l.rank == 0) return 0;
  double out = 0;
  bool attn_seen = false, mlp_seen = false;
  for (const auto& t : lora_modules(l)) {
    if (t == "q" || t == "k" || t == "v") {
      out += lora_target(x.d, l, c, !attn_seen);
      attn_seen = true;
    } else if (t == "gate" || t == "up") {
      out += lora_target(x.d, l, c, !mlp_seen);
      mlp_seen = true;
    } else {
      out += lora_target(t == "o" ? x.q : x.f, l, c, true);
    }
  }
  return out;
}

double dropout_mask(double p, double w) { return p > 0 ? w : 0; }

}  // namespace

double layer_saved_per_token(const ModelShape& m, const Lora& l, const SavedContext& c) {
  const Family& f = *m.family;
  Widths x = widths(m, c);
  double qkv_consumers = f.fused_qkv ? 1 : 3;
  double masks = 2 * dropout_mask(m.resid_dropout, x.d);
  double core = qk_norms(f, x, c) + attention(f, x, c) + lora_terms(l, x, c) + masks;
  switch (f.layout) {
    case Layout::kPreNorm: {
      double h = norm_out(f.norm, c.r, c);
      return core + 2 * norm(f.norm, c.r, x.d, 1, c.frozen) +
             linear_in(h, x.d, int(qkv_consumers), c) + mlp(f, m, x, h, c);
    }
    case Layout::kSandwich:
      return core + 2 * norm(f.norm, c.r, x.d, 1, c.frozen) + 2 * norm(f.norm, c.a, x.d, 1, c.frozen) +
             linear_in(c.r, x.d, int(qkv_consumers), c) + mlp(f, m, x, c.r, c);
    case Layout::kPostNorm:
      return core + 2 * norm(f.norm, c.a, x.d, 1, c.frozen) +
             linear_in(c.r, x.d, int(qkv_consumers), c) + mlp(f, m, x, c.r, c);
    case Layout::kParallel: {
      double h = norm_out(f.norm, c.r, c);
      double second = m.parallel_residual ? 8 : norm(f.norm, c.r, x.d, 1, c.frozen);
      return core + norm(f.norm, c.r, x.d, 1, c.frozen) + second +
             linear_in(h, x.d, int(qkv_consumers), c) + mlp(f, m, x, h, c);
    }
  }
  return core;
}

double root_saved_per_token(const ModelShape& m, const SavedContext& c) {
  const Family& f = *m.family;
  double d = double(m.hidden);
  return dropout_mask(m.embd_dropout, d) + norm(f.norm, c.r, d, 1, c.frozen) +
         linear_in(norm_out(f.norm, c.r, c), d, 1, c);
}

}  // namespace gpuenv::memory
