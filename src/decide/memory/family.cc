#include "decide/memory/family.h"

namespace gpuenv::memory {
namespace {

// model_type, modeling file, layout, norm, qk norm, attention copies, gated,
// fused qkv, fused gate_up, moe, learned positions, qkv bias, tied, head_dim,
// and whether RoPE's product is fp32 under autocast (the fp32 keys the
// training-mode KV cache holds until the output is dropped).
constexpr Family kFamilies[] = {
    {"llama", "llama/modeling_llama.py", Layout::kPreNorm, Norm::kRms, QkNorm::kNone,
     AttnCopies::kNone, true, false, false, false, false, false, false, 0, true},
    {"mistral", "mistral/modeling_mistral.py", Layout::kPreNorm, Norm::kRms, QkNorm::kNone,
     AttnCopies::kNone, true, false, false, false, false, false, false, 0, true},
    {"qwen2", "qwen2/modeling_qwen2.py", Layout::kPreNorm, Norm::kRms, QkNorm::kNone,
     AttnCopies::kNone, true, false, false, false, false, true, false, 0, true},
    {"qwen3", "qwen3/modeling_qwen3.py", Layout::kPreNorm, Norm::kRms, QkNorm::kPerHead,
     AttnCopies::kNone, true, false, false, false, false, false, false, 128, true},
    {"gemma2", "gemma2/modeling_gemma2.py", Layout::kSandwich, Norm::kRmsFp32, QkNorm::kNone,
     AttnCopies::kNone, true, false, false, false, false, false, true, 256, true},
    {"gemma3_text", "gemma3/modeling_gemma3.py", Layout::kSandwich, Norm::kRmsFp32,
     QkNorm::kPerHead, AttnCopies::kNone, true, false, false, false, false, false, true, 256, true},
    {"phi3", "phi3/modeling_phi3.py", Layout::kPreNorm, Norm::kRms, QkNorm::kNone,
     AttnCopies::kOutput16, true, true, true, false, false, false, false, 0, true},
    {"gpt2", "gpt2/modeling_gpt2.py", Layout::kPreNorm, Norm::kLayerNorm, QkNorm::kNone,
     AttnCopies::kGpt2, false, true, false, false, true, false, true, 0, false},
    {"gpt_neox", "gpt_neox/modeling_gpt_neox.py", Layout::kParallel, Norm::kLayerNorm,
     QkNorm::kNone, AttnCopies::kOutput16, false, true, false, false, false, false, false, 0, true},
    {"olmo2", "olmo2/modeling_olmo2.py", Layout::kPostNorm, Norm::kRmsFp32, QkNorm::kFull,
     AttnCopies::kNone, true, false, false, false, false, false, false, 0, false},
    {"mixtral", "mixtral/modeling_mixtral.py", Layout::kPreNorm, Norm::kRms, QkNorm::kNone,
     AttnCopies::kNone, true, false, false, true, false, false, false, 0, true},
    {"qwen3_moe", "qwen3_moe/modeling_qwen3_moe.py", Layout::kPreNorm, Norm::kRms,
     QkNorm::kPerHead, AttnCopies::kNone, true, false, false, true, false, false, false, 128, true},
};

}  // namespace

const Family* find_family(const std::string& model_type) {
  for (const auto& f : kFamilies)
    if (model_type == f.model_type) return &f;
  return nullptr;
}

const Family& llama_family() { return kFamilies[0]; }

std::vector<std::string> family_names() {
  std::vector<std::string> out;
  for (const auto& f : kFamilies) out.push_back(f.model_type);
  return out;
}

}  // namespace gpuenv::memory
