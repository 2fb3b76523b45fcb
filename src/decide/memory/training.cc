#include "decide/memory/training.h"

#include <nlohmann/json.hpp>

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
  if (m.hidden % m.heads != 0)
    return n(kHeads) + " " + std::to_string(m.heads) + " does not divide " + n(kHidden) + " " +
           std::to_string(m.hidden) + ": each head gets hidden/heads dimensions";
  if (m.heads % m.kv_heads != 0)
    return n(kKvHeads) + " " + std::to_string(m.kv_heads) + " does not divide " + n(kHeads) + " " +
           std::to_string(m.heads) + ": each key/value head serves heads/kv-heads query heads";
  if (m.arch == Arch::kLlama && (m.hidden / m.heads) % 2 != 0)
    return "head dimension " + n(kHidden) + "/" + n(kHeads) + " = " +
           std::to_string(m.hidden / m.heads) + " is odd: RoPE rotates pairs of dimensions";
  if (m.arch == Arch::kGpt2 && m.kv_heads != m.heads)
    return n(kKvHeads) + " is for llama: GPT-2 style attention has as many key/value heads as heads";
  return "";
}

}  // namespace

ModelShape with_defaults(ModelShape m) {
  if (m.kv_heads == 0) m.kv_heads = m.heads;
  if (m.ffn == 0) m.ffn = m.arch == Arch::kGpt2 ? 4 * m.hidden : m.hidden * 8 / 3;
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
  return divides_problem(m, config);
}

std::string training_problem(const Training& t, bool config) {
  if (std::string why = shape_problem(t.model, config); !why.empty()) return why;
  if (std::string why = range_problem("--seq", t.seq, kMaxTokens); !why.empty()) return why;
  if (std::string why = range_problem("--batch", t.batch, kMaxTokens); !why.empty()) return why;
  if (std::string why = range_problem("--gpus", t.gpus, 1LL << 16); !why.empty()) return why;
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
    *err = "config.json's \"" + key + "\" is not an integer: " + it->dump().substr(0, 40);
    return false;
  }
  if (it->is_number_unsigned() && it->get<unsigned long long>() > (1ULL << 62)) {
    *err = "config.json's \"" + key + "\" is too large";
    return false;
  }
  *out = it->get<long long>();
  return true;
}

bool read_tied(const json& j, ModelShape* m, std::string* err) {
  auto it = j.find("tie_word_embeddings");
  if (it == j.end() || it->is_null()) return true;
  if (!it->is_boolean()) {
    *err = "config.json's \"tie_word_embeddings\" is not true or false";
    return false;
  }
  m->tied = it->get<bool>() ? 1 : 0;
  return true;
}

bool read_gpt2(const json& j, ModelShape* m, std::string* err) {
  m->arch = Arch::kGpt2;
  return read_int(j, "n_embd", true, &m->hidden, err) &&
         read_int(j, "n_layer", true, &m->layers, err) &&
         read_int(j, "n_head", true, &m->heads, err) &&
         read_int(j, "vocab_size", true, &m->vocab, err) &&
         read_int(j, "n_positions", true, &m->positions, err) &&
         read_int(j, "n_inner", false, &m->ffn, err) && read_tied(j, m, err);
}

bool read_llama(const json& j, ModelShape* m, std::string* err) {
  m->arch = Arch::kLlama;
  if (!(read_int(j, "hidden_size", true, &m->hidden, err) &&
        read_int(j, "num_hidden_layers", true, &m->layers, err) &&
        read_int(j, "num_attention_heads", true, &m->heads, err) &&
        read_int(j, "num_key_value_heads", false, &m->kv_heads, err) &&
        read_int(j, "intermediate_size", true, &m->ffn, err) &&
        read_int(j, "vocab_size", true, &m->vocab, err) && read_tied(j, m, err)))
    return false;
  long long head_dim = 0;
  if (!read_int(j, "head_dim", false, &head_dim, err)) return false;
  if (head_dim != 0 && m->heads > 0 && head_dim * m->heads != m->hidden) {
    *err = "config.json's \"head_dim\" " + std::to_string(head_dim) +
           " is not hidden_size/num_attention_heads: such models are not modelled";
    return false;
  }
  return true;
}

}  // namespace

bool shape_from_hf_config(const std::string& text, ModelShape* m, std::string* err) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) {
    *err = "config.json is not valid JSON";
    return false;
  }
  if (!j.is_object()) {
    *err = "config.json is not a JSON object";
    return false;
  }
  auto type = j.find("model_type");
  if (type == j.end() || !type->is_string()) {
    *err = "config.json has no \"model_type\" string (gpt2 or llama)";
    return false;
  }
  *m = ModelShape{};
  std::string family = type->get<std::string>();
  if (family != "gpt2" && family != "llama") {
    *err = "config.json's \"model_type\" is \"" + family.substr(0, 40) +
           "\": plan-memory models gpt2 and llama";
    return false;
  }
  bool ok = family == "gpt2" ? read_gpt2(j, m, err) : read_llama(j, m, err);
  if (!ok) return false;
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

}  // namespace gpuenv::memory
