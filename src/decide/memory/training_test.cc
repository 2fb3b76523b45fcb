#include "decide/memory/training.h"

#include <gtest/gtest.h>

#include "decide/memory/estimate.h"
#include "decide/memory/family.h"

namespace gpuenv::memory {
namespace {

ModelShape gpt2_124m() { return {Arch::kGpt2, 768, 12, 12, 0, 0, 50257, 0, -1}; }

TEST(MemoryShape, ParameterCountsMatchThePublishedModels) {
  // GPT-2 small (tied, 1024 positions) and Llama 3.2 1B (tied, GQA 32/8).
  EXPECT_EQ(parameter_count(gpt2_124m(), 1024), 124439808);
  ModelShape llama{Arch::kLlama, 2048, 16, 32, 8, 8192, 128256, 0, 1};
  EXPECT_EQ(parameter_count(llama, 2048), 1235814400);
  llama.tied = 0;  // an untied head adds V x D
  EXPECT_EQ(parameter_count(llama, 2048), 1235814400 + 128256.0 * 2048);
}

TEST(MemoryShape, DefaultsAreTheMeasuredScriptsOnes) {
  ModelShape g = with_defaults(gpt2_124m());
  EXPECT_EQ(g.ffn, 3072);
  EXPECT_EQ(g.kv_heads, 12);
  EXPECT_EQ(g.tied, 1);
  ModelShape l = with_defaults({Arch::kLlama, 768, 12, 12, 4, 0, 32000, 0, -1});
  EXPECT_EQ(l.ffn, 2048);  // 768 * 8 / 3
  EXPECT_EQ(l.tied, 0);
}

// The default MLP width comes only from a hidden size in range: 4 x (2^61 + 1)
// overflows (UBSan), and the range check names --hidden / n_embd first.
TEST(MemoryShape, DefaultsNeverOverflow) {
  for (long long hidden : {(1LL << 61) + 1, 1LL << 62, (1LL << 20) + 1}) {
    for (Arch arch : {Arch::kGpt2, Arch::kLlama}) {
      ModelShape m = with_defaults({arch, hidden, 12, 12, 0, 0, 50257, 0, -1});
      EXPECT_EQ(m.ffn, 0) << hidden;
      EXPECT_EQ(shape_problem(m).rfind("--hidden " + std::to_string(hidden) + " is larger than 1048576", 0), 0u)
          << shape_problem(m);
    }
  }
  std::string err;
  ModelShape m;
  EXPECT_FALSE(shape_from_hf_config(R"({"model_type": "gpt2", "n_embd": 4611686018427387904})", &m, &err));
  EXPECT_EQ(err, "config.json: n_embd 4611686018427387904 is larger than 1048576");
}

TEST(MemoryShape, ImpossibleShapesNameTheField) {
  struct Row {
    ModelShape shape;
    std::string expected;  // start of the message
  };
  const Row rows[] = {
      {{Arch::kGpt2, 768, 12, 5, 0, 0, 50257, 0, -1}, "--heads 5 does not divide --hidden 768"},
      {{Arch::kLlama, 768, 12, 12, 5, 0, 32000, 0, -1}, "--kv-heads 5 does not divide --heads 12"},
      {{Arch::kGpt2, 0, 12, 12, 0, 0, 50257, 0, -1}, "--hidden must be a positive integer"},
      {{Arch::kGpt2, 768, -3, 12, 0, 0, 50257, 0, -1}, "--layers must be a positive integer"},
      {{Arch::kGpt2, 768, 12, 12, 0, -1, 50257, 0, -1}, "--ffn must be a positive integer"},
      {{Arch::kGpt2, 768, 12, 12, 0, 0, 1LL << 30, 0, -1}, "--vocab 1073741824 is larger"},
      {{Arch::kLlama, 24, 2, 8, 0, 0, 100, 0, -1}, "head dimension --hidden/--heads = 3 is odd"},
      {{Arch::kGpt2, 768, 12, 12, 4, 0, 50257, 0, -1}, "--kv-heads is for llama"},
      {[] { ModelShape m{Arch::kLlama, 768, 12, 12, 0, 0, 32000, 0, -1}; m.head_dim = -64; return m; }(),
       "head_dim must be a positive integer (got -64)"},
  };
  for (const auto& r : rows) {
    std::string why = shape_problem(r.shape);
    EXPECT_EQ(why.substr(0, r.expected.size()), r.expected) << why;
  }
  EXPECT_EQ(shape_problem(gpt2_124m()), "");
}

TEST(MemoryShape, TrainingProblemsNameTheFlag) {
  Training t;
  t.model = gpt2_124m();
  t.seq = 1024;
  t.batch = 0;
  EXPECT_EQ(training_problem(t).rfind("--batch must be", 0), 0u);
  t.batch = 8;
  t.gpus = 0;
  EXPECT_EQ(training_problem(t).rfind("--gpus must be", 0), 0u);
  t.gpus = 1;
  t.model.positions = 512;  // from a config: seq longer than the positions
  EXPECT_EQ(training_problem(t, true), "--seq 1024 is longer than the model's n_positions 512");
  t.model.positions = 0;
  EXPECT_EQ(training_problem(t), "");
}

const char* kGpt2Config = R"({"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12,
  "vocab_size": 50257, "n_positions": 1024, "n_inner": null})";
const char* kLlamaConfig = R"({"model_type": "llama", "hidden_size": 2048,
  "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8,
  "intermediate_size": 8192, "vocab_size": 128256, "tie_word_embeddings": true, "head_dim": 64})";

TEST(MemoryConfig, ReadsGpt2AndLlamaConfigs) {
  ModelShape m;
  std::string err;
  ASSERT_TRUE(shape_from_hf_config(kGpt2Config, &m, &err)) << err;
  EXPECT_EQ(m.arch, Arch::kGpt2);
  EXPECT_EQ(m.positions, 1024);
  EXPECT_EQ(parameter_count(m, 1024), 124439808);
  ASSERT_TRUE(shape_from_hf_config(kLlamaConfig, &m, &err)) << err;
  EXPECT_EQ(m.arch, Arch::kLlama);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.tied, 1);
  EXPECT_EQ(parameter_count(m, 2048), 1235814400);
}

TEST(MemoryConfig, ReadsEachFamilysFieldsAndDefaults) {
  ModelShape m;
  std::string err, warning;
  // GPT2Config's defaults: dropout 0.1 everywhere, gelu_new, 1024 positions.
  ASSERT_TRUE(shape_from_hf_config(R"({"model_type": "gpt2"})", &m, &err)) << err;
  EXPECT_EQ(m.hidden, 768);
  EXPECT_EQ(m.positions, 1024);
  EXPECT_DOUBLE_EQ(m.resid_dropout, 0.1);
  EXPECT_EQ(m.act, Activation::kGeluNew);
  const char* qwen2 = R"({"model_type": "qwen2", "hidden_size": 896, "num_hidden_layers": 24,
    "num_attention_heads": 14, "num_key_value_heads": 2, "intermediate_size": 4864,
    "vocab_size": 151936, "tie_word_embeddings": true, "sliding_window": 32768,
    "use_sliding_window": false, "max_position_embeddings": 32768})";
  ASSERT_TRUE(shape_from_hf_config(qwen2, &m, &err)) << err;
  EXPECT_TRUE(m.qkv_bias);  // Qwen2Attention: q/k/v with bias, o without
  EXPECT_FALSE(m.o_bias);
  EXPECT_EQ(m.sliding_window, 0);
  EXPECT_EQ(m.max_positions, 32768);
  EXPECT_EQ(parameter_count(m, 2048), 494032768);  // Qwen2.5-0.5B's published count
  ASSERT_TRUE(shape_from_hf_config(R"({"model_type": "gemma2", "hidden_size": 2304,
    "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4,
    "intermediate_size": 9216, "vocab_size": 256000})", &m, &err)) << err;
  EXPECT_EQ(head_dim_of(m), 256);  // Gemma2Config's default, not hidden / heads
  EXPECT_TRUE(m.logit_softcap);
  EXPECT_EQ(m.tied, 1);
  EXPECT_EQ(m.act, Activation::kGelu);
  // An unknown family with Llama's fields is planned as llama, and says so.
  ASSERT_TRUE(shape_from_hf_config(R"({"model_type": "granite", "hidden_size": 2048,
    "num_hidden_layers": 4, "num_attention_heads": 16, "intermediate_size": 8192,
    "vocab_size": 49152})", &m, &err, &warning)) << err;
  EXPECT_EQ(m.family, &llama_family());
  EXPECT_NE(warning.find("\"granite\" is not a family plan-memory knows: planned as llama"),
            std::string::npos) << warning;
  // Multimodal configs: the text model under text_config.
  ASSERT_TRUE(shape_from_hf_config(R"({"model_type": "gemma3", "text_config": {"model_type":
    "gemma3_text", "hidden_size": 2560, "num_hidden_layers": 34, "num_attention_heads": 8,
    "num_key_value_heads": 4, "intermediate_size": 10240, "vocab_size": 262208}})", &m, &err)) << err;
  EXPECT_EQ(m.model_type, "gemma3_text");
}

TEST(MemoryConfig, LoraTargetsAreCheckedAgainstTheFamily) {
  ModelShape m;
  std::string err;
  ASSERT_TRUE(shape_from_hf_config(R"({"model_type": "phi3", "hidden_size": 64,
    "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100})",
                                   &m, &err)) << err;
  Lora l;
  l.rank = 8;
  EXPECT_NE(lora_problem(m, l).find("phi3 has no separate q projection"), std::string::npos);
  l.targets = {"o", "down"};
  EXPECT_EQ(lora_problem(m, l), "");
  l.targets = {"qkv"};
  EXPECT_NE(lora_problem(m, l).find("is not one of"), std::string::npos);
  ModelShape plain{Arch::kLlama, 64, 2, 4, 0, 128, 100, 0, -1};
  EXPECT_NE(lora_problem(plain, {8, {"q"}, 0}).find("needs a Hugging Face model"), std::string::npos);
}

// peft wraps a module once however often target_modules names it: q,q,q
// plans as q (the issue: 3x the trainable parameters, a peak 4.2 GB higher).
TEST(MemoryConfig, DuplicateLoraTargetsCountOnce) {
  ModelShape m;
  std::string err;
  ASSERT_TRUE(shape_from_hf_config(kLlamaConfig, &m, &err)) << err;
  Training once, thrice;
  once.model = thrice.model = m;
  once.seq = thrice.seq = 2048, once.batch = thrice.batch = 1;
  once.precision = thrice.precision = Precision::kBf16Mixed;
  once.lora = {16, {"q", "v"}, 0.05};
  thrice.lora = {16, {"q", "q", "v", "q", "v"}, 0.05};
  EXPECT_EQ(lora_modules(thrice.lora), (std::vector<std::string>{"q", "v"}));
  EXPECT_EQ(lora_problem(m, thrice.lora), "");
  GpuTraits gpu;
  Estimate a = estimate(once, gpu), b = estimate(thrice, gpu);
  EXPECT_EQ(b.trainable, a.trainable);
  EXPECT_EQ(b.parameters, a.parameters);
  EXPECT_EQ(b.peak_bytes(), a.peak_bytes());
}

// A model_type is kept to 64 bytes and quoted to 40, never cut inside a character.
TEST(MemoryConfig, ModelTypeIsCutAtACharacter) {
  const std::string e_acute = "\xc3\xa9";
  ModelShape m;
  std::string err, warning;
  std::string llama_fields = R"(, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "intermediate_size": 128, "vocab_size": 100})";
  ASSERT_TRUE(shape_from_hf_config("{\"model_type\": \"" + std::string(39, 'a') + e_acute + std::string(30, 'b') +
                                       "\"" + llama_fields,
                                   &m, &err, &warning)) << err;
  EXPECT_NE(warning.find("model_type \"" + std::string(39, 'a') + "\" is not a family"), std::string::npos) << warning;
  ASSERT_TRUE(shape_from_hf_config("{\"model_type\": \"" + std::string(63, 'a') + e_acute + "\"" + llama_fields, &m,
                                   &err, &warning)) << err;
  EXPECT_EQ(m.model_type, std::string(63, 'a'));
  EXPECT_FALSE(shape_from_hf_config("{\"model_type\": \"" + std::string(39, 'a') + e_acute + "\"}", &m, &err));
  EXPECT_NE(err.find("\"" + std::string(39, 'a') + "\": plan-memory models"), std::string::npos) << err;
}

TEST(MemoryConfig, BadConfigsNameWhatIsWrong) {
  const std::pair<std::string, std::string> rows[] = {
      {"{not json", "config.json: not valid JSON"},
      {R"({"model_type": "llama", "hidden_size": 64, "hidden_size": 128})",
       "config.json: the key \"hidden_size\" is given twice"},
      {"[1, 2]", "config.json is not a JSON object"},
      {R"({"n_embd": 768})", "config.json has no \"model_type\""},
      {R"({"model_type": "bert", "hidden_size": 768})", "config.json's \"model_type\" is \"bert\""},
      {R"({"model_type": "gpt2", "n_embd": 768, "attn_pdrop": 1.5})",
       "config.json's \"attn_pdrop\" is not a probability"},
      {R"({"model_type": "gpt2", "activation_function": "mish"})",
       "config.json's \"activation_function\" is \"mish\""},
      {R"({"model_type": "mixtral", "hidden_size": 64, "num_hidden_layers": 2,
          "num_attention_heads": 4, "intermediate_size": 64, "vocab_size": 100,
          "num_local_experts": 2, "num_experts_per_tok": 3})",
       "config.json's \"num_experts_per_tok\" 3 is more than the experts, 2"},
      {R"({"model_type": "gpt2", "n_embd": "768"})", "config.json's \"n_embd\" is not an integer"},
      {R"({"model_type": "gpt2", "n_embd": 768.5})", "config.json's \"n_embd\" is not an integer"},
      {R"({"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 7, "vocab_size": 9,
          "n_positions": 8})",
       "config.json: n_head 7 does not divide n_embd 768"},
      {R"({"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 2,
          "num_attention_heads": 32, "num_key_value_heads": 6, "intermediate_size": 64,
          "vocab_size": 100})",
       "config.json: num_key_value_heads 6 does not divide num_attention_heads 32"},
      {R"({"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 2,
          "num_attention_heads": 32, "intermediate_size": 64, "vocab_size": 100,
          "head_dim": 4611686018427387904})",
       "config.json: head_dim 4611686018427387904 is larger than 4096"},
      {R"({"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 2,
          "num_attention_heads": 32, "intermediate_size": 64, "vocab_size": 100,
          "head_dim": 8192})",
       "config.json: head_dim 8192 is larger than 4096"},
      {R"({"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 2,
          "num_attention_heads": 32, "intermediate_size": 64, "vocab_size": 100,
          "tie_word_embeddings": 1})",
       "config.json's \"tie_word_embeddings\" is not true or false"},
      {R"({"model_type": "llama", "hidden_size": 18446744073709551615})",
       "config.json's \"hidden_size\" is too large"},
      {R"({"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 2,
          "num_attention_heads": 32, "intermediate_size": 64, "vocab_size": 100, "head_dim": 0})",
       "config.json's \"head_dim\" must be a positive integer (got 0)"},
      {R"({"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 2,
          "num_attention_heads": 32, "intermediate_size": 64, "vocab_size": 100, "head_dim": -64})",
       "config.json's \"head_dim\" must be a positive integer (got -64)"},
      {R"({"model_type": "mistral", "hidden_size": 2048, "num_hidden_layers": 2,
          "num_attention_heads": 32, "intermediate_size": 64, "vocab_size": 100, "sliding_window": -1})",
       "config.json's \"sliding_window\" must be a positive integer or null (got -1)"},
      {R"({"model_type": "gemma3_text", "hidden_size": 2048, "num_hidden_layers": 2,
          "num_attention_heads": 32, "intermediate_size": 64, "vocab_size": 100, "sliding_window": 512,
          "layer_types": ["sliding_attention", "sliding_attention", "full_attention"]})",
       "config.json's \"layer_types\" has 3 entries for 2 layers (num_hidden_layers): one per layer"},
      {R"({"model_type": "qwen2", "hidden_size": 2048, "num_hidden_layers": 4,
          "num_attention_heads": 32, "intermediate_size": 64, "vocab_size": 100,
          "use_sliding_window": true, "max_window_layers": -9223372036854775808})",
       ""},  // no overflow (UBSan): all four layers windowed
  };
  for (const auto& [text, expected] : rows) {
    ModelShape m;
    std::string err;
    EXPECT_EQ(shape_from_hf_config(text, &m, &err), expected.empty()) << text;
    EXPECT_EQ(err.substr(0, expected.size()), expected) << text;
  }
}

}  // namespace
}  // namespace gpuenv::memory
