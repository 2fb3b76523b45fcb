// plan-memory: the model from flags or a Hugging Face config.json, the
// training from flags, the GPUs from sensing or --machine; decide/memory/
// does the arithmetic (docs/memory.md).
#include "cli/cmd_plan_memory.h"

#include <map>
#include <memory>

#include "act/memory_report.h"
#include "cli/exit_codes.h"
#include "sense/fs.h"

namespace gpuenv {
namespace {

using namespace memory;

struct Flags {
  std::string config, arch, precision = "fp32", optimizer = "adamw", strategy = "ddp";
  std::string attention = "auto";
  bool tied = false, untied = false, json = false;
  std::map<std::string, CLI::Option*> given;  // the shape flags, to tell absent from 0
  Training t;
};

template <typename T>
T pick(const std::map<std::string, T>& names, const std::string& s) {
  return names.at(s);  // CLI11's IsMember has checked s
}

const std::map<std::string, Precision> kPrecisions = {{"fp32", Precision::kFp32},
                                                       {"bf16-mixed", Precision::kBf16Mixed},
                                                       {"fp16-mixed", Precision::kFp16Mixed},
                                                       {"bf16", Precision::kBf16}};
const std::map<std::string, Optimizer> kOptimizers = {
    {"adamw", Optimizer::kAdamW}, {"sgd", Optimizer::kSgd}, {"adafactor", Optimizer::kAdafactor}};
const std::map<std::string, Strategy> kStrategies = {{"ddp", Strategy::kDdp},
                                                      {"fsdp", Strategy::kFsdp},
                                                      {"fsdp-offload", Strategy::kFsdpOffload}};
const std::map<std::string, Attention> kAttention = {
    {"auto", Attention::kAuto}, {"fused", Attention::kFused}, {"math", Attention::kMath}};

template <typename T>
std::vector<std::string> keys(const std::map<std::string, T>& m) {
  std::vector<std::string> out;
  for (const auto& [k, v] : m) out.push_back(k);
  return out;
}

void add_shape_flags(CLI::App* sub, Flags* f) {
  ModelShape* m = &f->t.model;
  auto* config = sub->add_option("--config", f->config,
                                 "A Hugging Face config.json (gpt2 or llama), read locally")
                     ->option_text("FILE");
  auto shape = [&](const char* name, long long* v, const char* help) {
    f->given[name] = sub->add_option(name, *v, help)->option_text("N")->excludes(config);
  };
  sub->add_option("--arch", f->arch, "gpt2 or llama")
      ->check(CLI::IsMember({"gpt2", "llama"}))
      ->excludes(config);
  shape("--hidden", &m->hidden, "Hidden size D");
  shape("--layers", &m->layers, "Transformer blocks L");
  shape("--heads", &m->heads, "Attention heads H");
  shape("--kv-heads", &m->kv_heads, "Key/value heads (llama, grouped-query; default = heads)");
  shape("--ffn", &m->ffn, "MLP width (default 4D for gpt2, 8D/3 for llama)");
  shape("--vocab", &m->vocab, "Vocabulary size V");
  auto* tied = sub->add_flag("--tied", f->tied, "lm_head shares the token embedding (gpt2 default)");
  auto* untied = sub->add_flag("--untied", f->untied, "lm_head has its own weight (llama default)");
  tied->excludes(untied);
}

void add_training_flags(CLI::App* sub, Flags* f) {
  Training* t = &f->t;
  f->given["--seq"] = sub->add_option("--seq", t->seq, "Sequence length T")->option_text("N");
  f->given["--batch"] =
      sub->add_option("--batch", t->batch, "Micro-batch per GPU B")->option_text("N");
  sub->add_option("--precision", f->precision, "fp32 (default), bf16-mixed, fp16-mixed or bf16")
      ->check(CLI::IsMember(keys(kPrecisions)));
  sub->add_option("--optimizer", f->optimizer, "adamw (default), sgd (momentum) or adafactor")
      ->check(CLI::IsMember(keys(kOptimizers)));
  sub->add_flag("--fused-optimizer", t->fused_optimizer, "AdamW(fused=True)");
  sub->add_flag("--checkpointing", t->checkpointing, "Activation checkpointing per block");
  sub->add_option("--gpus", t->gpus, "GPUs that train (default 1)")->option_text("N");
  sub->add_option("--strategy", f->strategy, "ddp (default), fsdp or fsdp-offload")
      ->check(CLI::IsMember(keys(kStrategies)));
  sub->add_option("--attention", f->attention,
                  "SDPA kernel: auto (default: as PyTorch picks), fused or math")
      ->check(CLI::IsMember(keys(kAttention)));
  sub->add_flag("--json", f->json, "The plan as JSON");
}

// The shape from the flags; the message names the flag that is missing.
std::string shape_from_flags(Flags* f) {
  if (f->arch.empty()) return "--arch gpt2|llama is required (or --config FILE)";
  f->t.model.arch = f->arch == "gpt2" ? Arch::kGpt2 : Arch::kLlama;
  for (const char* flag : {"--hidden", "--layers", "--heads", "--vocab"})
    if (f->given.at(flag)->count() == 0) return std::string(flag) + " is required with --arch";
  return "";
}

int run(Context* ctx, Flags* f) {
  Training& t = f->t;
  if (!f->config.empty()) {
    std::string text, err;
    if (!fs::read_file(f->config, &text, &err)) {
      print_error("plan-memory: cannot read --config: " + err);
      return kExitBadInput;
    }
    if (!shape_from_hf_config(text, &t.model, &err)) {
      print_error("plan-memory: " + f->config + ": " + err);
      return kExitBadInput;
    }
  } else if (std::string why = shape_from_flags(f); !why.empty()) {
    print_error("plan-memory: " + why);
    return kExitUsage;
  }
  if (f->tied || f->untied) t.model.tied = f->tied ? 1 : 0;
  for (const char* flag : {"--seq", "--batch"})
    if (f->given.at(flag)->count() == 0) {
      print_error(std::string("plan-memory: ") + flag + " is required");
      return kExitUsage;
    }
  t.precision = pick(kPrecisions, f->precision);
  t.optimizer = pick(kOptimizers, f->optimizer);
  t.strategy = pick(kStrategies, f->strategy);
  t.attention = pick(kAttention, f->attention);
  // A --config shape has been checked; what is left is the flags'.
  if (std::string why = training_problem(t, !f->config.empty()); !why.empty()) {
    print_error("plan-memory: " + why);
    return kExitUsage;
  }
  Machine m;
  if (!ctx->load_machine(&m)) return kExitBadInput;
  MemoryPlan p = plan_memory(m, ctx->plan_options(m), t);
  std::string out = f->json ? memory_plan_to_json(p) : render_memory_plan(p);
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

}  // namespace

std::function<int()> setup_plan_memory(CLI::App* sub, Context* ctx) {
  auto f = std::make_shared<Flags>();
  add_shape_flags(sub, f.get());
  add_training_flags(sub, f.get());
  sub->footer(
      "Predicts the peak of torch.cuda.max_memory_allocated() per GPU for a training step "
      "(docs/memory.md). Exit status: 0 a plan (fits or not: see \"fits\"), 2 bad flags, 3 a "
      "bad --config or --machine file.");
  ctx->add_common_flags(sub, kSensingFlags | kFlagOverride);
  return [ctx, f] { return run(ctx, f.get()); };
}

}  // namespace gpuenv
