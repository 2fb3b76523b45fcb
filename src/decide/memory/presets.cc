#include "decide/memory/presets.h"

#include "sys/text.h"

namespace gpuenv::memory {

// Each row is the Hub repository's config.json (huggingface.co/NAME/blob/main/
// config.json), reduced to the fields plan-memory reads; absent fields take
// the family's transformers defaults, as from_config would.
const std::vector<Preset>& presets() {
  static const std::vector<Preset> kPresets = {
    {"meta-llama/Llama-3.2-1B",
     "{\"model_type\": \"llama\", \"hidden_size\": 2048, \"num_hidden_layers\": 16, \"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"intermediate_size\": 8192, \"vocab_size\": 128256, \"tie_word_embeddings\": true, \"head_dim\": 64, \"max_position_embeddings\": 131072}"},
    {"meta-llama/Llama-3.2-3B",
     "{\"model_type\": \"llama\", \"hidden_size\": 3072, \"num_hidden_layers\": 28, \"num_attention_heads\": 24, \"num_key_value_heads\": 8, \"intermediate_size\": 8192, \"vocab_size\": 128256, \"tie_word_embeddings\": true, \"head_dim\": 128, \"max_position_embeddings\": 131072}"},
    {"meta-llama/Llama-3.1-8B",
     "{\"model_type\": \"llama\", \"hidden_size\": 4096, \"num_hidden_layers\": 32, \"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"intermediate_size\": 14336, \"vocab_size\": 128256, \"tie_word_embeddings\": false, \"max_position_embeddings\": 131072}"},
    {"meta-llama/Llama-3.1-70B",
     "{\"model_type\": \"llama\", \"hidden_size\": 8192, \"num_hidden_layers\": 80, \"num_attention_heads\": 64, \"num_key_value_heads\": 8, \"intermediate_size\": 28672, \"vocab_size\": 128256, \"tie_word_embeddings\": false, \"max_position_embeddings\": 131072}"},
    {"TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T",
     "{\"model_type\": \"llama\", \"hidden_size\": 2048, \"num_hidden_layers\": 22, \"num_attention_heads\": 32, \"num_key_value_heads\": 4, \"intermediate_size\": 5632, \"vocab_size\": 32000, \"tie_word_embeddings\": false, \"max_position_embeddings\": 2048}"},
    {"HuggingFaceTB/SmolLM2-135M",
     "{\"model_type\": \"llama\", \"hidden_size\": 576, \"num_hidden_layers\": 30, \"num_attention_heads\": 9, \"num_key_value_heads\": 3, \"intermediate_size\": 1536, \"vocab_size\": 49152, \"tie_word_embeddings\": true, \"max_position_embeddings\": 8192}"},
    {"HuggingFaceTB/SmolLM2-360M",
     "{\"model_type\": \"llama\", \"hidden_size\": 960, \"num_hidden_layers\": 32, \"num_attention_heads\": 15, \"num_key_value_heads\": 5, \"intermediate_size\": 2560, \"vocab_size\": 49152, \"tie_word_embeddings\": true, \"max_position_embeddings\": 8192}"},
    {"HuggingFaceTB/SmolLM2-1.7B",
     "{\"model_type\": \"llama\", \"hidden_size\": 2048, \"num_hidden_layers\": 24, \"num_attention_heads\": 32, \"num_key_value_heads\": 32, \"intermediate_size\": 8192, \"vocab_size\": 49152, \"tie_word_embeddings\": true, \"max_position_embeddings\": 8192}"},
    {"mistralai/Mistral-7B-v0.1",
     "{\"model_type\": \"mistral\", \"hidden_size\": 4096, \"num_hidden_layers\": 32, \"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"intermediate_size\": 14336, \"vocab_size\": 32000, \"tie_word_embeddings\": false, \"sliding_window\": 4096, \"max_position_embeddings\": 32768}"},
    {"mistralai/Mistral-7B-v0.3",
     "{\"model_type\": \"mistral\", \"hidden_size\": 4096, \"num_hidden_layers\": 32, \"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"intermediate_size\": 14336, \"vocab_size\": 32768, \"tie_word_embeddings\": false, \"sliding_window\": null, \"max_position_embeddings\": 32768}"},
    {"mistralai/Mixtral-8x7B-v0.1",
     "{\"model_type\": \"mixtral\", \"hidden_size\": 4096, \"num_hidden_layers\": 32, \"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"intermediate_size\": 14336, \"vocab_size\": 32000, \"tie_word_embeddings\": false, \"num_local_experts\": 8, \"num_experts_per_tok\": 2, \"max_position_embeddings\": 32768}"},
    {"Qwen/Qwen2.5-0.5B",
     "{\"model_type\": \"qwen2\", \"hidden_size\": 896, \"num_hidden_layers\": 24, \"num_attention_heads\": 14, \"num_key_value_heads\": 2, \"intermediate_size\": 4864, \"vocab_size\": 151936, \"tie_word_embeddings\": true, \"max_position_embeddings\": 32768, \"use_sliding_window\": false}"},
    {"Qwen/Qwen2.5-1.5B",
     "{\"model_type\": \"qwen2\", \"hidden_size\": 1536, \"num_hidden_layers\": 28, \"num_attention_heads\": 12, \"num_key_value_heads\": 2, \"intermediate_size\": 8960, \"vocab_size\": 151936, \"tie_word_embeddings\": true, \"max_position_embeddings\": 131072, \"use_sliding_window\": false}"},
    {"Qwen/Qwen2.5-3B",
     "{\"model_type\": \"qwen2\", \"hidden_size\": 2048, \"num_hidden_layers\": 36, \"num_attention_heads\": 16, \"num_key_value_heads\": 2, \"intermediate_size\": 11008, \"vocab_size\": 151936, \"tie_word_embeddings\": true, \"max_position_embeddings\": 32768, \"use_sliding_window\": false}"},
    {"Qwen/Qwen2.5-7B",
     "{\"model_type\": \"qwen2\", \"hidden_size\": 3584, \"num_hidden_layers\": 28, \"num_attention_heads\": 28, \"num_key_value_heads\": 4, \"intermediate_size\": 18944, \"vocab_size\": 152064, \"tie_word_embeddings\": false, \"max_position_embeddings\": 131072, \"use_sliding_window\": false}"},
    {"Qwen/Qwen2.5-14B",
     "{\"model_type\": \"qwen2\", \"hidden_size\": 5120, \"num_hidden_layers\": 48, \"num_attention_heads\": 40, \"num_key_value_heads\": 8, \"intermediate_size\": 13824, \"vocab_size\": 152064, \"tie_word_embeddings\": false, \"max_position_embeddings\": 131072, \"use_sliding_window\": false}"},
    {"Qwen/Qwen2.5-32B",
     "{\"model_type\": \"qwen2\", \"hidden_size\": 5120, \"num_hidden_layers\": 64, \"num_attention_heads\": 40, \"num_key_value_heads\": 8, \"intermediate_size\": 27648, \"vocab_size\": 152064, \"tie_word_embeddings\": false, \"max_position_embeddings\": 131072, \"use_sliding_window\": false}"},
    {"Qwen/Qwen2.5-72B",
     "{\"model_type\": \"qwen2\", \"hidden_size\": 8192, \"num_hidden_layers\": 80, \"num_attention_heads\": 64, \"num_key_value_heads\": 8, \"intermediate_size\": 29568, \"vocab_size\": 152064, \"tie_word_embeddings\": false, \"max_position_embeddings\": 131072, \"use_sliding_window\": false}"},
    {"Qwen/Qwen3-0.6B",
     "{\"model_type\": \"qwen3\", \"hidden_size\": 1024, \"num_hidden_layers\": 28, \"num_attention_heads\": 16, \"num_key_value_heads\": 8, \"intermediate_size\": 3072, \"vocab_size\": 151936, \"tie_word_embeddings\": true, \"head_dim\": 128, \"max_position_embeddings\": 40960}"},
    {"Qwen/Qwen3-1.7B",
     "{\"model_type\": \"qwen3\", \"hidden_size\": 2048, \"num_hidden_layers\": 28, \"num_attention_heads\": 16, \"num_key_value_heads\": 8, \"intermediate_size\": 6144, \"vocab_size\": 151936, \"tie_word_embeddings\": true, \"head_dim\": 128, \"max_position_embeddings\": 40960}"},
    {"Qwen/Qwen3-4B",
     "{\"model_type\": \"qwen3\", \"hidden_size\": 2560, \"num_hidden_layers\": 36, \"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"intermediate_size\": 9728, \"vocab_size\": 151936, \"tie_word_embeddings\": true, \"head_dim\": 128, \"max_position_embeddings\": 40960}"},
    {"Qwen/Qwen3-8B",
     "{\"model_type\": \"qwen3\", \"hidden_size\": 4096, \"num_hidden_layers\": 36, \"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"intermediate_size\": 12288, \"vocab_size\": 151936, \"tie_word_embeddings\": false, \"head_dim\": 128, \"max_position_embeddings\": 40960}"},
    {"Qwen/Qwen3-14B",
     "{\"model_type\": \"qwen3\", \"hidden_size\": 5120, \"num_hidden_layers\": 40, \"num_attention_heads\": 40, \"num_key_value_heads\": 8, \"intermediate_size\": 17408, \"vocab_size\": 151936, \"tie_word_embeddings\": false, \"head_dim\": 128, \"max_position_embeddings\": 40960}"},
    {"Qwen/Qwen3-32B",
     "{\"model_type\": \"qwen3\", \"hidden_size\": 5120, \"num_hidden_layers\": 64, \"num_attention_heads\": 64, \"num_key_value_heads\": 8, \"intermediate_size\": 25600, \"vocab_size\": 151936, \"tie_word_embeddings\": false, \"head_dim\": 128, \"max_position_embeddings\": 40960}"},
    {"Qwen/Qwen3-30B-A3B",
     "{\"model_type\": \"qwen3_moe\", \"hidden_size\": 2048, \"num_hidden_layers\": 48, \"num_attention_heads\": 32, \"num_key_value_heads\": 4, \"intermediate_size\": 6144, \"vocab_size\": 151936, \"tie_word_embeddings\": false, \"head_dim\": 128, \"moe_intermediate_size\": 768, \"num_experts\": 128, \"num_experts_per_tok\": 8, \"mlp_only_layers\": [], \"max_position_embeddings\": 40960}"},
    {"google/gemma-2-2b",
     "{\"model_type\": \"gemma2\", \"hidden_size\": 2304, \"num_hidden_layers\": 26, \"num_attention_heads\": 8, \"num_key_value_heads\": 4, \"intermediate_size\": 9216, \"vocab_size\": 256000, \"tie_word_embeddings\": true, \"head_dim\": 256, \"final_logit_softcapping\": 30.0, \"sliding_window\": 4096, \"max_position_embeddings\": 8192}"},
    {"google/gemma-2-9b",
     "{\"model_type\": \"gemma2\", \"hidden_size\": 3584, \"num_hidden_layers\": 42, \"num_attention_heads\": 16, \"num_key_value_heads\": 8, \"intermediate_size\": 14336, \"vocab_size\": 256000, \"tie_word_embeddings\": true, \"head_dim\": 256, \"final_logit_softcapping\": 30.0, \"sliding_window\": 4096, \"max_position_embeddings\": 8192}"},
    {"google/gemma-2-27b",
     "{\"model_type\": \"gemma2\", \"hidden_size\": 4608, \"num_hidden_layers\": 46, \"num_attention_heads\": 32, \"num_key_value_heads\": 16, \"intermediate_size\": 36864, \"vocab_size\": 256000, \"tie_word_embeddings\": true, \"head_dim\": 128, \"final_logit_softcapping\": 30.0, \"sliding_window\": 4096, \"max_position_embeddings\": 8192}"},
    {"google/gemma-3-1b-pt",
     "{\"model_type\": \"gemma3_text\", \"hidden_size\": 1152, \"num_hidden_layers\": 26, \"num_attention_heads\": 4, \"num_key_value_heads\": 1, \"intermediate_size\": 6912, \"vocab_size\": 262144, \"tie_word_embeddings\": true, \"head_dim\": 256, \"final_logit_softcapping\": null, \"sliding_window\": 512, \"max_position_embeddings\": 32768}"},
    {"microsoft/Phi-3-mini-4k-instruct",
     "{\"model_type\": \"phi3\", \"hidden_size\": 3072, \"num_hidden_layers\": 32, \"num_attention_heads\": 32, \"num_key_value_heads\": 32, \"intermediate_size\": 8192, \"vocab_size\": 32064, \"tie_word_embeddings\": false, \"max_position_embeddings\": 4096, \"sliding_window\": 2047}"},
    {"microsoft/Phi-3.5-mini-instruct",
     "{\"model_type\": \"phi3\", \"hidden_size\": 3072, \"num_hidden_layers\": 32, \"num_attention_heads\": 32, \"num_key_value_heads\": 32, \"intermediate_size\": 8192, \"vocab_size\": 32064, \"tie_word_embeddings\": false, \"max_position_embeddings\": 131072, \"sliding_window\": 262144}"},
    {"microsoft/phi-4",
     "{\"model_type\": \"phi3\", \"hidden_size\": 5120, \"num_hidden_layers\": 40, \"num_attention_heads\": 40, \"num_key_value_heads\": 10, \"intermediate_size\": 17920, \"vocab_size\": 100352, \"tie_word_embeddings\": false, \"max_position_embeddings\": 16384}"},
    {"microsoft/Phi-4-mini-instruct",
     "{\"model_type\": \"phi3\", \"hidden_size\": 3072, \"num_hidden_layers\": 32, \"num_attention_heads\": 24, \"num_key_value_heads\": 8, \"intermediate_size\": 8192, \"vocab_size\": 200064, \"tie_word_embeddings\": true, \"max_position_embeddings\": 131072}"},
    {"allenai/OLMo-2-0425-1B",
     "{\"model_type\": \"olmo2\", \"hidden_size\": 2048, \"num_hidden_layers\": 16, \"num_attention_heads\": 16, \"num_key_value_heads\": 16, \"intermediate_size\": 8192, \"vocab_size\": 100352, \"tie_word_embeddings\": false, \"max_position_embeddings\": 4096}"},
    {"allenai/OLMo-2-1124-7B",
     "{\"model_type\": \"olmo2\", \"hidden_size\": 4096, \"num_hidden_layers\": 32, \"num_attention_heads\": 32, \"num_key_value_heads\": 32, \"intermediate_size\": 11008, \"vocab_size\": 100352, \"tie_word_embeddings\": false, \"max_position_embeddings\": 4096}"},
    {"EleutherAI/pythia-160m",
     "{\"model_type\": \"gpt_neox\", \"hidden_size\": 768, \"num_hidden_layers\": 12, \"num_attention_heads\": 12, \"num_key_value_heads\": 12, \"intermediate_size\": 3072, \"vocab_size\": 50304, \"tie_word_embeddings\": false, \"max_position_embeddings\": 2048, \"use_parallel_residual\": true}"},
    {"EleutherAI/pythia-410m",
     "{\"model_type\": \"gpt_neox\", \"hidden_size\": 1024, \"num_hidden_layers\": 24, \"num_attention_heads\": 16, \"num_key_value_heads\": 16, \"intermediate_size\": 4096, \"vocab_size\": 50304, \"tie_word_embeddings\": false, \"max_position_embeddings\": 2048, \"use_parallel_residual\": true}"},
    {"EleutherAI/pythia-1.4b",
     "{\"model_type\": \"gpt_neox\", \"hidden_size\": 2048, \"num_hidden_layers\": 24, \"num_attention_heads\": 16, \"num_key_value_heads\": 16, \"intermediate_size\": 8192, \"vocab_size\": 50304, \"tie_word_embeddings\": false, \"max_position_embeddings\": 2048, \"use_parallel_residual\": true}"},
    {"openai-community/gpt2",
     "{\"model_type\": \"gpt2\", \"n_embd\": 768, \"n_layer\": 12, \"n_head\": 12, \"n_positions\": 1024, \"vocab_size\": 50257}"},
    {"openai-community/gpt2-medium",
     "{\"model_type\": \"gpt2\", \"n_embd\": 1024, \"n_layer\": 24, \"n_head\": 16, \"n_positions\": 1024, \"vocab_size\": 50257}"},
    {"openai-community/gpt2-large",
     "{\"model_type\": \"gpt2\", \"n_embd\": 1280, \"n_layer\": 36, \"n_head\": 20, \"n_positions\": 1024, \"vocab_size\": 50257}"},
    {"openai-community/gpt2-xl",
     "{\"model_type\": \"gpt2\", \"n_embd\": 1600, \"n_layer\": 48, \"n_head\": 25, \"n_positions\": 1024, \"vocab_size\": 50257}"},
  };
  return kPresets;
}

const Preset* find_preset(const std::string& name) {
  std::string want = ascii_lower(name);
  for (const auto& p : presets()) {
    std::string full = ascii_lower(p.name), tail = full.substr(full.find('/') + 1);
    if (want == full || want == tail) return &p;
  }
  return nullptr;
}

}  // namespace gpuenv::memory
