// Every family's saved-tensor formula against what autograd saved on the
// H200: tests/memory/hf_h200_probe.jsonl lists, per family and precision,
// each tensor torch.autograd.graph.saved_tensors_hooks saw in one decoder
// layer and around the head of a tiny model (tests/gpu/hf_memory_measure.py
// --probe), deduplicated by storage. The formulas must add up to the same
// bytes per token.
#include "decide/memory/saved.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "decide/memory/family.h"
#include "test_paths.h"

namespace gpuenv::memory {
namespace {

using nlohmann::json;

constexpr double kBatch = 2;

json read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return json::parse(s.str());
}

// The probe's tiny model: the suite's config with the probe's sizes
// (hf_memory_measure.py's tiny()).
ModelShape tiny(const std::string& name, const json& overrides) {
  json d = read(test_paths::tests_dir() + "/memory/hf/" + name + ".json");
  const std::pair<const char*, int> sizes[] = {
      {"hidden_size", 384}, {"n_embd", 384},           {"num_hidden_layers", 2},
      {"n_layer", 2},       {"num_attention_heads", 6}, {"n_head", 6},
      {"num_key_value_heads", 2}, {"intermediate_size", 1280}, {"vocab_size", 5000},
      {"moe_intermediate_size", 320}, {"num_local_experts", 4}, {"num_experts", 8}};
  for (const auto& [k, v] : sizes)
    if (d.contains(k)) d[k] = v;
  std::string type = d["model_type"];
  if (type == "gpt2") d["n_inner"] = 1280;
  if (type == "gpt_neox" || type == "phi3" || type == "olmo2") d["num_key_value_heads"] = 6;
  if (d.contains("head_dim")) d["head_dim"] = 64;
  d.update(overrides);
  ModelShape m;
  std::string err;
  EXPECT_TRUE(shape_from_hf_config(d.dump(), &m, &err)) << name << ": " << err;
  return m;
}

// Tensors that grow with the tokens: their first dimension is B, B x H, the
// tokens or the routed tokens (the rest are weights' bf16 casts and scalars).
bool per_token(const json& entry, double seq) {
  const json& shape = entry[1];
  if (shape.empty()) return false;
  double lead = shape[0].get<double>(), n = kBatch * seq;
  return lead == kBatch || lead == kBatch * 6 || lead == n || lead == 2 * n || lead == 4 * n;
}

double measured_per_token(const json& entries, bool root, double seq) {
  double bytes = 0;
  for (const auto& e : entries) {
    if (!per_token(e, seq)) continue;
    if (root && (e[2] == "int64" || e[1].back() == 5000)) continue;  // ids, logits: modelled apart
    bytes += e[3].get<double>();
  }
  return bytes / (kBatch * seq);
}

SavedContext context(const std::string& precision, const ModelShape& m, bool lora, double seq) {
  SavedContext c;
  c.kv_expanded = m.sliding_window > 0 && seq > double(m.sliding_window);
  c.mixed = precision == "bf16-mixed";
  c.a = precision == "fp32" ? 4 : 2;
  c.r = precision == "bf16" ? 2 : 4;
  c.frozen = lora;
  c.math = precision == "fp32" && m.kv_heads != 0 && m.kv_heads != m.heads && !c.kv_expanded;
  c.seq = seq;
  return c;
}

// Checks every row of a probe file; returns the families seen.
std::set<std::string> check_probe(const std::string& file, int* rows) {
  std::ifstream in(test_paths::tests_dir() + "/memory/" + file);
  std::set<std::string> families;
  for (std::string line; std::getline(in, line);) {
    json r = json::parse(line);
    EXPECT_FALSE(r.contains("error")) << line.substr(0, 200);
    if (r.contains("error")) continue;
    std::string name = r["probe"], precision = r["precision"];
    double seq = r.value("seq", 256.0);
    bool lora = name.size() > 5 && name.substr(name.size() - 5) == " lora";
    ModelShape m = tiny(lora ? name.substr(0, name.size() - 5) : name, r.value("overrides", json::object()));
    Lora l;
    if (lora) l.rank = 16, l.targets = {"q", "v"}, l.dropout = 0.05;
    SavedContext c = context(precision, m, lora, seq);
    std::string what = name + " " + precision + " T=" + std::to_string(int(seq));
    double layer = measured_per_token(r["layer"], false, seq);
    EXPECT_NEAR(layer_saved_per_token(m, l, c), layer, 0.005 * layer) << what;
    double root = measured_per_token(r["root"], true, seq);
    EXPECT_NEAR(root_saved_per_token(m, c), root, 0.005 * root + 1) << what;
    families.insert(m.model_type);
    ++*rows;
  }
  return families;
}

TEST(MemorySaved, EveryFamilyMatchesWhatAutogradSavedOnTheH200) {
  int rows = 0;
  std::set<std::string> families = check_probe("hf_h200_probe.jsonl", &rows);
  EXPECT_GE(rows, 40);
  EXPECT_EQ(families.size(), family_names().size()) << "every family has probe rows";
}

// A sliding window shorter than the sequence: the mask is saved per layer,
// the key/value heads repeated; longer sequences, and no mask for the rest.
TEST(MemorySaved, MaskedAndLongSequencesMatchToo) {
  int rows = 0;
  check_probe("hf_h200_probe_masks.jsonl", &rows);
  EXPECT_GE(rows, 10);
}

}  // namespace
}  // namespace gpuenv::memory
