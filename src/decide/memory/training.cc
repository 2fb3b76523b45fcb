#include "decide/memory/training.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "decide/memory/family.h"
#include "model/json_strict.h"
#include "sys/text.h"

namespace gpuenv::memory {
namespace {

// Upper bounds keep every product far below 2^53 and reject nonsense early.
constexpr long long kMaxWidth = 1LL << 20;   // hidden, ffn, heads
constexpr long long kMaxVocab = 1LL << 24;
constexpr long long kMaxLayers = 1LL << 14;
constexpr long long kMaxTokens = 1LL << 24;  // seq, batch, positions

enum Field { kHidden, kLayers, kHeads, kKvHeads, kFfn, kVocab, kPositions, kTied, kFieldCount };

// Each field's name on the command line and in GPT-2's and Llama's config.json.
constexpr const char* kFlagNames[kFieldCount] = {"--hidden", "--layers", "--heads", "--kv-heads",
                                                 "--ffn", "--vocab", "--seq", "--tied"};
constexpr const char* kGpt2Names[kFieldCount] = {"n_embd", "n_layer", "n_head", "n_head",
                                                 "n_inner", "vocab_size", "n_positions",
                                                 "tie_word_embeddings"};
constexpr const char* kLlamaNames[kFieldCount] = {
    "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
    "intermediate_size", "vocab_size", "max_position_embeddings", "tie_word_embeddings"};

std::string name(Field f, Arch a, bool config) {
  if (!config) return kFlagNames[f];
  return a == Arch::kGpt2 ? kGpt2Names[f] : kLlamaNames[f];
}

std::string range_problem(const std::string& field, long long v, long long max) {
  if (v <= 0) return field + " must be a positive integer (got " + std::to_string(v) + ")";
  if (v > max) return field + " " + std::to_string(v) + " is larger than " + std::to_string(max);
  return "";
}

std::string divides_problem(const ModelShape& m, bool config) {
  auto n = [&](Field f) { return name(f, m.arch, config); };
  if (m.head_dim < 0)
    return "head_dim must be a positive integer (got " + std::to_string(m.head_dim) + ")";
  if (m.head_dim > 4096)
    return "head_dim " + std::to_string(m.head_dim) + " is larger than 4096";
  if (m.head_dim == 0 && m.hidden % m.heads != 0)
    return n(kHeads) + " " + std::to_string(m.heads) + " does not divide " + n(kHidden) + " " +
           std::to_string(m.hidden) + ": each head gets hidden/heads dimensions";
  if (m.heads % m.kv_heads != 0)
    return n(kKvHeads) + " " + std::to_string(m.kv_heads) + " does not divide " + n(kHeads) + " " +
           std::to_string(m.heads) + ": each key/value head serves heads/kv-heads query heads";
  if (m.arch == Arch::kLlama && head_dim_of(m) % 2 != 0)
    return (m.head_dim ? std::string("head_dim") : "head dimension " + n(kHidden) + "/" + n(kHeads)) +
           " = " + std::to_string(head_dim_of(m)) + " is odd: RoPE rotates pairs of dimensions";
  if (m.arch == Arch::kGpt2 && m.kv_heads != m.heads)
    return n(kKvHeads) + " is for llama: GPT-2 style attention has as many key/value heads as heads";
  return "";
}

}  // namespace

ModelShape with_defaults(ModelShape m) {
  if (m.kv_heads == 0) m.kv_heads = m.heads;
  // The default width only from a hidden size in range: shape_problem names
  // that one first, and 4 x a hidden of 2^62 would overflow.
  if (m.ffn == 0 && m.hidden > 0 && m.hidden <= kMaxWidth)
    m.ffn = m.arch == Arch::kGpt2 ? 4 * m.hidden : m.hidden * 8 / 3;
  if (m.tied < 0) m.tied = m.arch == Arch::kGpt2 ? 1 : 0;
  return m;
}

std::string shape_problem(const ModelShape& given, bool config) {
  ModelShape m = with_defaults(given);
  auto n = [&](Field f) { return name(f, m.arch, config); };
  const std::pair<Field, std::pair<long long, long long>> checks[] = {
      {kHidden, {m.hidden, kMaxWidth}}, {kLayers, {m.layers, kMaxLayers}},
      {kHeads, {m.heads, kMaxWidth}},   {kKvHeads, {m.kv_heads, kMaxWidth}},
      {kFfn, {m.ffn, kMaxWidth}},       {kVocab, {m.vocab, kMaxVocab}}};
  for (const auto& [field, vm] : checks)
    if (std::string why = range_problem(n(field), vm.first, vm.second); !why.empty()) return why;
  if (m.positions != 0)
    if (std::string why = range_problem(n(kPositions), m.positions, kMaxTokens); !why.empty())
      return why;
  if (m.experts != 0) {
    if (std::string why = range_problem("num_experts", m.experts, 1 << 12); !why.empty()) return why;
    if (std::string why = range_problem("num_experts_per_tok", m.top_k, m.experts); !why.empty())
      return why;
  }
  return divides_problem(m, config);
}

std::string lora_problem(const ModelShape& m, const Lora& l) {
  if (l.rank == 0) return "";
  if (std::string why = range_problem("--lora-rank", l.rank, 1 << 14); !why.empty()) return why;
  if (!m.family) return "--lora-rank needs a Hugging Face model (--config or --model): peft wraps its modules";
  if (m.family->moe) return "--lora-rank on a mixture of experts is not modelled";
  if (!(l.dropout >= 0 && l.dropout < 1)) return "--lora-dropout must be in [0, 1)";
  if (l.targets.empty()) return "--lora-targets is empty";
  for (const auto& t : l.targets)
    if (t != "q" && t != "k" && t != "v" && t != "o" && t != "gate" && t != "up" && t != "down")
      return "--lora-targets: \"" + std::string(utf8_prefix(t, 20)) + "\" is not one of q, k, v, o, gate, up, down";
  for (const auto& t : l.targets)
    if ((m.family->fused_qkv && (t == "q" || t == "k" || t == "v")) ||
        (!m.family->gated_mlp && (t == "gate" || t == "up")) ||
        (m.family->fused_gate_up && (t == "gate" || t == "up")))
      return "--lora-targets " + t + ": " + m.family->model_type + " has no separate " + t +
             " projection (a fused one is not modelled as a LoRA target)";
  return "";
}

std::vector<std::string> lora_modules(const Lora& l) {
  std::vector<std::string> out;
  for (const auto& t : l.targets)
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  return out;
}

std::string training_problem(const Training& t, bool config) {
  if (std::string why = shape_problem(t.model, config); !why.empty()) return why;
  if (std::string why = range_problem("--seq", t.seq, kMaxTokens); !why.empty()) return why;
  if (std::string why = range_problem("--batch", t.batch, kMaxTokens); !why.empty()) return why;
  if (std::string why = range_problem("--gpus", t.gpus, 1LL << 16); !why.empty()) return why;
  // Beyond 2^31 tokens per step the peak is zettabytes: not a plan, and the
  // sums would lose the precision the comparisons need.
  if (double(t.seq) * double(t.batch) > double(1LL << 31))
    return "--seq x --batch = " + std::to_string(t.seq * t.batch) +
           " tokens per GPU per step is more than 2^31: no GPU holds that";
  if (std::string why = lora_problem(t.model, t.lora); !why.empty()) return why;
  if (t.fsdp_bf16 && t.strategy == Strategy::kDdp)
    return "--fsdp-mixed-precision needs --strategy fsdp or fsdp-offload";
  if (t.fsdp_bf16 && t.precision != Precision::kFp32)
    return "--fsdp-mixed-precision replaces --precision: FSDP casts the parameters itself (leave "
           "--precision at fp32, the shards' dtype)";
  if (t.model.arch == Arch::kGpt2 && t.model.positions != 0 && t.seq > t.model.positions)
    return "--seq " + std::to_string(t.seq) + " is longer than the model's " +
           name(kPositions, t.model.arch, config) + " " + std::to_string(t.model.positions);
  return "";
}

namespace {

using nlohmann::json;

// A positive integer field; `required` false leaves *out alone when absent
// or null. JSON numbers that are not integers are refused by name.
bool read_int(const json& j, const std::string& key, bool required, long long* out,
              std::string* err) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (required) *err = "config.json has no \"" + key + "\" (an integer is required)";
    return !required;
  }
  if (!it->is_number_integer()) {
    *err = "config.json's \"" + key + "\" is not an integer: " + std::string(utf8_prefix(it->dump(), 40));
    return false;
  }
  if (it->is_number_unsigned() && it->get<unsigned long long>() > (1ULL << 62)) {
    *err = "config.json's \"" + key + "\" is too large";
    return false;
  }
  *out = it->get<long long>();
  return true;
}

// An optional field that, when given, must be a positive integer: 0 is how
// ModelShape spells "absent", so a config's 0 or -1 is refused by name.
bool read_positive(const json& j, const std::string& key, long long* out, std::string* err) {
  long long v = 0;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return true;
  if (!read_int(j, key, true, &v, err)) return false;
  if (v <= 0) {
    *err = "config.json's \"" + key + "\" must be a positive integer (got " + std::to_string(v) + ")";
    return false;
  }
  *out = v;
  return true;
}

bool read_bool(const json& j, const std::string& key, bool* out, std::string* err) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return true;
  if (!it->is_boolean()) {
    *err = "config.json's \"" + key + "\" is not true or false";
    return false;
  }
  *out = it->get<bool>();
  return true;
}

// Absent: the family's default (m->tied as set, -1 for with_defaults()).
bool read_tied(const json& j, ModelShape* m, std::string* err) {
  if (!j.contains("tie_word_embeddings") || j["tie_word_embeddings"].is_null()) return true;
  bool tied = false;
  if (!read_bool(j, "tie_word_embeddings", &tied, err)) return false;
  m->tied = tied ? 1 : 0;
  return true;
}

// A probability (dropout): a number in [0, 1); absent or null leaves *out.
bool read_probability(const json& j, const std::string& key, double* out, std::string* err) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return true;
  if (!it->is_number() || !(it->get<double>() >= 0 && it->get<double>() < 1)) {
    *err = "config.json's \"" + key + "\" is not a probability in [0, 1): " + std::string(utf8_prefix(it->dump(), 40));
    return false;
  }
  *out = it->get<double>();
  return true;
}

bool has_number(const json& j, const std::string& key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() && it->get<double>() != 0;
}

// The activation as the config names it (hidden_act, hidden_activation,
// activation_function): transformers' ACT2FN keys.
bool read_activation(const json& j, ModelShape* m, std::string* err) {
  for (const char* key : {"hidden_activation", "hidden_act", "activation_function"}) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_string()) {
      *err = std::string("config.json's \"") + key + "\" is not a string";
      return false;
    }
    std::string a = it->get<std::string>();
    if (a == "gelu_new" || a == "gelu_fast") {  // Python expressions, op by op
      m->act = Activation::kGeluNew;
    } else if (a == "silu" || a == "swish") {
      m->act = Activation::kSilu;
    } else if (a.rfind("gelu", 0) == 0) {
      m->act = Activation::kGelu;  // gelu, gelu_pytorch_tanh: one op
    } else if (a == "relu") {
      m->act = Activation::kRelu;
    } else {
      *err = std::string("config.json's \"") + key + "\" is \"" + std::string(utf8_prefix(a, 40)) +
             "\": plan-memory models silu, gelu, gelu_pytorch_tanh, gelu_new and relu";
      return false;
    }
    return true;
  }
  return true;
}

bool read_gpt2(const json& j, ModelShape* m, std::string* err) {
  m->arch = Arch::kGpt2;
  m->hidden = 768, m->layers = 12, m->heads = 12, m->vocab = 50257, m->positions = 1024;
  m->embd_dropout = m->resid_dropout = m->attn_dropout = 0.1;  // GPT2Config's defaults
  m->act = Activation::kGeluNew;
  m->qkv_bias = m->o_bias = m->mlp_bias = true;  // Conv1D layers with bias
  return read_int(j, "n_embd", false, &m->hidden, err) &&
         read_int(j, "n_layer", false, &m->layers, err) &&
         read_int(j, "n_head", false, &m->heads, err) &&
         read_int(j, "vocab_size", false, &m->vocab, err) &&
         read_int(j, "n_positions", false, &m->positions, err) &&
         read_int(j, "n_inner", false, &m->ffn, err) && read_tied(j, m, err) &&
         read_probability(j, "embd_pdrop", &m->embd_dropout, err) &&
         read_probability(j, "resid_pdrop", &m->resid_dropout, err) &&
         read_probability(j, "attn_pdrop", &m->attn_dropout, err) && read_activation(j, m, err);
}

// The fields every other family shares with Llama.
bool read_llama_fields(const json& j, ModelShape* m, std::string* err) {
  m->arch = Arch::kLlama;
  return read_int(j, "hidden_size", true, &m->hidden, err) &&
         read_int(j, "num_hidden_layers", true, &m->layers, err) &&
         read_int(j, "num_attention_heads", true, &m->heads, err) &&
         read_int(j, "num_key_value_heads", false, &m->kv_heads, err) &&
         read_int(j, "intermediate_size", !m->family->moe, &m->ffn, err) &&
         read_int(j, "vocab_size", true, &m->vocab, err) &&
         read_positive(j, "head_dim", &m->head_dim, err) &&
         read_int(j, "max_position_embeddings", false, &m->max_positions, err) &&
         read_tied(j, m, err) && read_activation(j, m, err) &&
         read_probability(j, "attention_dropout", &m->attn_dropout, err);
}

bool read_biases(const json& j, ModelShape* m, std::string* err) {
  bool attention_bias = m->qkv_bias, mlp_bias = false;
  if (!read_bool(j, "attention_bias", &attention_bias, err) || !read_bool(j, "mlp_bias", &mlp_bias, err))
    return false;
  if (!m->family->qkv_bias_default) m->qkv_bias = m->o_bias = attention_bias;
  m->mlp_bias = mlp_bias;
  return true;
}

bool read_experts(const json& j, ModelShape* m, std::string* err) {
  const bool mixtral = std::string(m->family->model_type) == "mixtral";
  m->experts = mixtral ? 8 : 128, m->top_k = mixtral ? 2 : 8;
  if (!read_int(j, mixtral ? "num_local_experts" : "num_experts", false, &m->experts, err) ||
      !read_int(j, "num_experts_per_tok", false, &m->top_k, err))
    return false;
  if (!mixtral) {
    long long moe_ffn = 768;
    if (!read_int(j, "moe_intermediate_size", false, &moe_ffn, err)) return false;
    auto dense = j.find("mlp_only_layers");
    if (dense != j.end() && dense->is_array()) m->dense_layers = (long long)dense->size();
    if (m->dense_layers > 0) {
      *err = "config.json's \"mlp_only_layers\" is not empty: dense layers in a qwen3_moe model "
             "are not modelled";
      return false;
    }
    m->ffn = moe_ffn;
  }
  if (m->top_k > m->experts) {
    *err = "config.json's \"num_experts_per_tok\" " + std::to_string(m->top_k) +
           " is more than the experts, " + std::to_string(m->experts);
    return false;
  }
  return true;
}

// Which layers use the window: transformers' layer_types when the config
// has it, else each family's rule (gemma2 alternates, gemma3 has five local
// layers in six, qwen2/qwen3 from max_window_layers on with use_sliding_window).
bool read_window_layers(const json& j, ModelShape* m, std::string* err) {
  std::string type = m->family->model_type;
  if (auto types = j.find("layer_types"); types != j.end() && types->is_array() && !types->empty()) {
    if (long long n = (long long)types->size(); m->layers > 0 && n != m->layers) {
      *err = "config.json's \"layer_types\" has " + std::to_string(n) + " entries for " +
             std::to_string(m->layers) + " layers (num_hidden_layers): one per layer";
      return false;
    }
    double sliding = 0;
    for (const auto& t : *types) sliding += t == "sliding_attention" ? 1 : 0;
    m->window_fraction = sliding / double(types->size());
  } else if (type == "gemma2") {
    m->window_fraction = 0.5;
  } else if (type == "gemma3_text") {
    long long pattern = 6;
    if (!read_int(j, "sliding_window_pattern", false, &pattern, err)) return false;
    if (pattern < 1 || pattern > kMaxLayers) {
      *err = "config.json's \"sliding_window_pattern\" must be a positive integer";
      return false;
    }
    m->window_fraction = double(pattern - 1) / double(pattern);
  } else if (type == "qwen2" || type == "qwen3" || type == "qwen3_moe") {
    bool use_window = false;
    long long from = 0;
    if (!read_bool(j, "use_sliding_window", &use_window, err) ||
        !read_int(j, "max_window_layers", false, &from, err))
      return false;
    m->window_fraction = use_window && m->layers > 0
                             ? std::max(0.0, double(m->layers) - double(from)) / double(m->layers)
                             : 0;
  }
  m->window_fraction = std::clamp(m->window_fraction, 0.0, 1.0);
  if (m->window_fraction <= 0) m->sliding_window = 0;
  return true;
}

bool read_family(const json& j, ModelShape* m, std::string* err) {
  const Family& f = *m->family;
  std::string type = f.model_type;
  if (type == "gpt2") return read_gpt2(j, m, err);
  m->tied = f.tied_default ? 1 : 0;
  m->head_dim = f.head_dim_default;
  m->qkv_bias = f.qkv_bias_default;
  m->act = Activation::kSilu;
  if (type.rfind("gemma", 0) == 0) m->act = Activation::kGelu;
  if (!read_llama_fields(j, m, err) || !read_biases(j, m, err)) return false;
  if (f.moe && !read_experts(j, m, err)) return false;
  if (type == "gpt_neox") {
    m->act = Activation::kGelu;
    m->qkv_bias = m->o_bias = m->mlp_bias = true;
    m->parallel_residual = true;
    if (!read_bool(j, "use_parallel_residual", &m->parallel_residual, err) ||
        !read_probability(j, "hidden_dropout", &m->resid_dropout, err) ||
        !read_activation(j, m, err))
      return false;
  }
  if (type == "phi3" && !read_probability(j, "resid_pdrop", &m->resid_dropout, err)) return false;
  if (type == "gemma2") m->logit_softcap = true;  // Gemma2Config: 30.0 unless null
  auto cap = j.find("final_logit_softcapping");
  if (cap != j.end()) m->logit_softcap = has_number(j, "final_logit_softcapping");
  if (!read_int(j, "sliding_window", false, &m->sliding_window, err)) return false;
  if (m->sliding_window < 0) {
    *err = "config.json's \"sliding_window\" must be a positive integer or null (got " +
           std::to_string(m->sliding_window) + ")";
    return false;
  }
  return read_window_layers(j, m, err);
}

// An unknown model_type is read as llama when it has Llama's fields.
bool looks_like_llama(const json& j) {
  for (const char* k : {"hidden_size", "num_hidden_layers", "num_attention_heads",
                        "intermediate_size", "vocab_size"})
    if (!j.contains(k) || !j[k].is_number_integer()) return false;
  return true;
}

std::string family_list() {
  std::string out;
  for (const auto& n : family_names()) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

long long head_dim_of(const ModelShape& m) {
  if (m.head_dim > 0) return m.head_dim;
  return m.heads > 0 ? m.hidden / m.heads : 0;
}

bool shape_from_hf_config(const std::string& text, ModelShape* m, std::string* err,
                          std::string* warning) {
  json j;
  if (!parse_json_strict(text, &j, err, "config.json")) {
    if (err->rfind("config.json", 0) != 0) *err = "config.json: " + *err;
    return false;
  }
  if (!j.is_object()) {
    *err = "config.json is not a JSON object";
    return false;
  }
  // Multimodal configs keep the language model under text_config.
  if (auto text_config = j.find("text_config"); text_config != j.end() && text_config->is_object() &&
                                                 !j.contains("hidden_size"))
    j = *text_config;
  auto type = j.find("model_type");
  if (type == j.end() || !type->is_string()) {
    *err = "config.json has no \"model_type\" string (" + family_list() + ")";
    return false;
  }
  *m = ModelShape{};
  m->model_type = std::string(utf8_prefix(type->get<std::string>(), 64));
  m->family = find_family(m->model_type);
  if (!m->family) {
    if (!looks_like_llama(j)) {
      *err = "config.json's \"model_type\" is \"" + std::string(utf8_prefix(m->model_type, 40)) +
             "\": plan-memory models " + family_list() +
             ", and other families only when their config has Llama's fields";
      return false;
    }
    m->family = &llama_family();
    if (warning)
      *warning = "model_type \"" + std::string(utf8_prefix(m->model_type, 40)) +
                 "\" is not a family plan-memory knows: planned as llama (pre-norm RMSNorm, "
                 "separate q/k/v, a gated MLP), which may not be how its code saves activations";
  }
  if (!read_family(j, m, err)) return false;
  if (std::string why = shape_problem(*m, true); !why.empty()) {
    *err = "config.json: " + why;
    return false;
  }
  return true;
}

const char* arch_name(Arch a) { return a == Arch::kGpt2 ? "gpt2" : "llama"; }

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::kFp32: return "fp32";
    case Precision::kBf16Mixed: return "bf16-mixed";
    case Precision::kFp16Mixed: return "fp16-mixed";
    case Precision::kBf16: return "bf16";
  }
  return "?";
}

const char* optimizer_name(Optimizer o) {
  return o == Optimizer::kAdamW ? "adamw" : o == Optimizer::kSgd ? "sgd" : "adafactor";
}

const char* strategy_name(Strategy s) {
  return s == Strategy::kDdp ? "ddp" : s == Strategy::kFsdp ? "fsdp" : "fsdp-offload";
}

const char* loop_name(Loop l) { return l == Loop::kKeepsLogits ? "keeps-logits" : "frees-logits"; }

}  // namespace gpuenv::memory
