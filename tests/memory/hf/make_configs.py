"""Writes the config.json files of the Hugging Face memory suite (tests/memory/hf/*.json).

Each is a config as it appears on the Hub for that family (the fields users have), at sizes
that train in seconds on one H200. Run once; the files are committed.
"""
import json, os

HERE = os.path.dirname(os.path.abspath(__file__))

def llama(name, d, L, h, kv, f, v, tied, **kw):
    c = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": d,
         "num_hidden_layers": L, "num_attention_heads": h, "num_key_value_heads": kv,
         "intermediate_size": f, "vocab_size": v, "tie_word_embeddings": tied,
         "hidden_act": "silu", "max_position_embeddings": 131072, "rms_norm_eps": 1e-5,
         "rope_theta": 500000.0, "attention_bias": False, "attention_dropout": 0.0,
         "mlp_bias": False, "torch_dtype": "bfloat16", "bos_token_id": 1, "eos_token_id": 2}
    c.update(kw); return name, c

CONFIGS = dict([
    llama("llama-1b", 2048, 16, 32, 8, 8192, 128256, True, head_dim=64,
          rope_scaling={"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                        "original_max_position_embeddings": 8192, "rope_type": "llama3"}),
    llama("tinyllama", 2048, 22, 32, 4, 5632, 32000, False, max_position_embeddings=2048, rope_theta=10000.0),
    ("mistral-s", {"architectures": ["MistralForCausalLM"], "model_type": "mistral", "hidden_size": 1024,
                   "num_hidden_layers": 16, "num_attention_heads": 16, "num_key_value_heads": 4,
                   "intermediate_size": 3584, "vocab_size": 32768, "hidden_act": "silu",
                   "max_position_embeddings": 32768, "rms_norm_eps": 1e-5, "rope_theta": 1000000.0,
                   "sliding_window": 4096, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}),
    ("qwen2.5-0.5b", {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 896,
                      "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2,
                      "intermediate_size": 4864, "vocab_size": 151936, "hidden_act": "silu",
                      "max_position_embeddings": 32768, "max_window_layers": 21, "rms_norm_eps": 1e-6,
                      "rope_theta": 1000000.0, "sliding_window": 32768, "use_sliding_window": False,
                      "tie_word_embeddings": True, "attention_dropout": 0.0, "torch_dtype": "bfloat16"}),
    ("qwen3-0.6b", {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 1024,
                    "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 8,
                    "head_dim": 128, "intermediate_size": 3072, "vocab_size": 151936, "hidden_act": "silu",
                    "max_position_embeddings": 40960, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
                    "attention_bias": False, "sliding_window": None, "use_sliding_window": False,
                    "tie_word_embeddings": True, "torch_dtype": "bfloat16"}),
    ("gemma2-s", {"architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2", "hidden_size": 1024,
                  "num_hidden_layers": 8, "num_attention_heads": 8, "num_key_value_heads": 4,
                  "head_dim": 256, "intermediate_size": 4096, "vocab_size": 256000,
                  "hidden_activation": "gelu_pytorch_tanh", "hidden_act": "gelu_pytorch_tanh",
                  "max_position_embeddings": 8192, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
                  "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0,
                  "query_pre_attn_scalar": 256, "sliding_window": 4096, "attention_bias": False,
                  "attention_dropout": 0.0, "tie_word_embeddings": True, "torch_dtype": "bfloat16"}),
    ("gemma3-1b", {"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text", "hidden_size": 1152,
                   "num_hidden_layers": 26, "num_attention_heads": 4, "num_key_value_heads": 1,
                   "head_dim": 256, "intermediate_size": 6912, "vocab_size": 262144,
                   "hidden_activation": "gelu_pytorch_tanh", "max_position_embeddings": 32768,
                   "rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
                   "query_pre_attn_scalar": 256, "sliding_window": 512, "sliding_window_pattern": 6,
                   "attn_logit_softcapping": None, "final_logit_softcapping": None,
                   "attention_bias": False, "attention_dropout": 0.0, "tie_word_embeddings": True,
                   "torch_dtype": "bfloat16"}),
    ("phi3-s", {"architectures": ["Phi3ForCausalLM"], "model_type": "phi3", "hidden_size": 1536,
                "num_hidden_layers": 12, "num_attention_heads": 16, "num_key_value_heads": 16,
                "intermediate_size": 4096, "vocab_size": 32064, "hidden_act": "silu",
                "max_position_embeddings": 4096, "original_max_position_embeddings": 4096,
                "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "attention_dropout": 0.0,
                "embd_pdrop": 0.0, "resid_pdrop": 0.0, "sliding_window": 2047,
                "tie_word_embeddings": False, "torch_dtype": "bfloat16"}),
    ("gpt2", {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": 768, "n_layer": 12,
              "n_head": 12, "n_positions": 1024, "n_ctx": 1024, "vocab_size": 50257,
              "activation_function": "gelu_new", "attn_pdrop": 0.1, "embd_pdrop": 0.1,
              "resid_pdrop": 0.1, "layer_norm_epsilon": 1e-5, "initializer_range": 0.02}),
    ("gpt2-medium", {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": 1024,
                     "n_layer": 24, "n_head": 16, "n_positions": 1024, "n_ctx": 1024, "vocab_size": 50257,
                     "activation_function": "gelu_new", "attn_pdrop": 0.1, "embd_pdrop": 0.1,
                     "resid_pdrop": 0.1, "layer_norm_epsilon": 1e-5}),
    ("pythia-410m", {"architectures": ["GPTNeoXForCausalLM"], "model_type": "gpt_neox", "hidden_size": 1024,
                     "num_hidden_layers": 24, "num_attention_heads": 16, "intermediate_size": 4096,
                     "vocab_size": 50304, "hidden_act": "gelu", "rotary_pct": 0.25, "rotary_emb_base": 10000,
                     "max_position_embeddings": 2048, "use_parallel_residual": True,
                     "layer_norm_eps": 1e-5, "attention_dropout": 0.0, "hidden_dropout": 0.0,
                     "tie_word_embeddings": False, "torch_dtype": "float16"}),
    ("olmo2-s", {"architectures": ["Olmo2ForCausalLM"], "model_type": "olmo2", "hidden_size": 1024,
                 "num_hidden_layers": 16, "num_attention_heads": 16, "num_key_value_heads": 16,
                 "intermediate_size": 4096, "vocab_size": 100352, "hidden_act": "silu",
                 "max_position_embeddings": 4096, "rms_norm_eps": 1e-6, "rope_theta": 500000.0,
                 "attention_bias": False, "attention_dropout": 0.0, "tie_word_embeddings": False,
                 "torch_dtype": "bfloat16"}),
    ("mixtral-s", {"architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "hidden_size": 1024,
                   "num_hidden_layers": 8, "num_attention_heads": 16, "num_key_value_heads": 8,
                   "intermediate_size": 2048, "vocab_size": 32000, "num_local_experts": 8,
                   "num_experts_per_tok": 2, "hidden_act": "silu", "max_position_embeddings": 32768,
                   "rms_norm_eps": 1e-5, "rope_theta": 1000000.0, "sliding_window": None,
                   "router_aux_loss_coef": 0.02, "output_router_logits": False,
                   "tie_word_embeddings": False, "torch_dtype": "bfloat16"}),
    ("qwen3moe-s", {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 1024,
                    "num_hidden_layers": 8, "num_attention_heads": 16, "num_key_value_heads": 4,
                    "head_dim": 128, "intermediate_size": 3072, "moe_intermediate_size": 768,
                    "num_experts": 32, "num_experts_per_tok": 4, "decoder_sparse_step": 1,
                    "mlp_only_layers": [], "norm_topk_prob": True, "vocab_size": 151936,
                    "hidden_act": "silu", "max_position_embeddings": 40960, "rms_norm_eps": 1e-6,
                    "rope_theta": 1000000.0, "output_router_logits": False, "router_aux_loss_coef": 0.001,
                    "tie_word_embeddings": False, "torch_dtype": "bfloat16"}),
])

# Held-out variants (tests/gpu/hf_memory_measure.py's VERIFY rows).
DERIVED = {
    "mistral-w1k": ("mistral-s", {"sliding_window": 1024}),
    "phi4mini-s": ("phi3-s", {"num_attention_heads": 24, "num_key_value_heads": 8, "vocab_size": 200064,
                              "tie_word_embeddings": True, "max_position_embeddings": 131072,
                              "sliding_window": 262144}),
    "smollm2-360m": ("tinyllama", {"hidden_size": 960, "num_hidden_layers": 32, "num_attention_heads": 15,
                                   "num_key_value_heads": 5, "intermediate_size": 2560, "vocab_size": 49152,
                                   "tie_word_embeddings": True, "max_position_embeddings": 8192,
                                   "rope_theta": 100000.0}),
}
for name, (base, changes) in DERIVED.items():
    CONFIGS[name] = dict(CONFIGS[base], **changes)

if __name__ == "__main__":
    for name, c in CONFIGS.items():
        with open(os.path.join(HERE, name + ".json"), "w") as f:
            json.dump(c, f, indent=1); f.write("\n")
    print(len(CONFIGS), "configs")
