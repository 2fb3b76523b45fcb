// plan-memory: the model from flags or a Hugging Face config.json, the
// training from flags, the GPUs from sensing or --machine; decide/memory/
// does the arithmetic (docs/memory.md).
#include "cli/commands.h"

#include <cstdio>
#include <map>
#include <memory>
#include <set>

#include "act/render/job_report.h"
#include "act/render/memory_report.h"
#include "act/render/report.h"
#include "flow/command_history.h"
#include "decide/memory/presets.h"
#include "sys/text.h"
#include "model/exit_codes.h"
#include "sys/fs.h"

namespace gpuenv {
namespace {

using namespace memory;

struct Flags {
  std::string config, model, arch, precision = "fp32", optimizer = "adamw", strategy = "ddp";
  std::string lora_targets;
  double lora_alpha = 0;
  std::string attention = "auto";
  bool tied = false, untied = false, json = false;
  bool keeps_logits = false, frees_logits = false;
  std::map<std::string, CLI::Option*> given;  // the shape flags, to tell absent from 0
  Training t;
  struct Record {              // `[--] CMD`: the command the plan is kept for (record_plan)
    std::string db;            // --db FILE
    const CLI::App* sub = nullptr;
  } record;
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
                                 "A Hugging Face config.json (llama, mistral, qwen2, qwen3, "
                                 "gemma2, gemma3_text, phi3, gpt2, gpt_neox, olmo2, mixtral, "
                                 "qwen3_moe), read locally")
                     ->option_text("FILE");
  auto* model = sub->add_option("--model", f->model,
                                "A popular model's config by name (e.g. Qwen/Qwen2.5-7B; "
                                "--model list names them)")
                    ->option_text("NAME")
                    ->excludes(config);
  auto shape = [&](const char* name, long long* v, const char* help) {
    f->given[name] =
        sub->add_option(name, *v, help)->option_text("N")->excludes(config)->excludes(model);
  };
  sub->add_option("--arch", f->arch, "gpt2 or llama: the plain-PyTorch blocks of tests/gpu/plan_memory_measure.py")
      ->check(CLI::IsMember({"gpt2", "llama"}))
      ->excludes(config)
      ->excludes(model);
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

void add_loop_flags(CLI::App* sub, Flags* f) {
  auto* keeps = sub->add_flag("--keeps-logits", f->keeps_logits,
                              "The loop holds the model's outputs through backward (nanoGPT's "
                              "logits, loss = model(X, Y); outputs = model(**batch)): the B x T x V "
                              "logits stay allocated (the default)");
  auto* frees = sub->add_flag("--frees-logits", f->frees_logits,
                              "Only the loss survives the forward (Hugging Face Trainer, "
                              "model(...).loss): the logits are freed before backward");
  keeps->excludes(frees);
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
  sub->add_flag("--fsdp-mixed-precision", t->fsdp_bf16,
                "FSDP MixedPrecision(param_dtype=bf16): bf16 gathered parameters and compute "
                "(with --strategy fsdp|fsdp-offload)");
  sub->add_option("--attention", f->attention,
                  "SDPA kernel: auto (default: as PyTorch picks), fused or math")
      ->check(CLI::IsMember(keys(kAttention)));
  f->given["--lora-rank"] =
      sub->add_option("--lora-rank", t->lora.rank, "peft LoRA of rank R over a frozen base")->option_text("R");
  f->given["--lora-targets"] =
      sub->add_option("--lora-targets", f->lora_targets,
                      "Comma-separated: q,k,v,o,gate,up,down (default q,v, peft's for llama)")
          ->option_text("LIST");
  f->given["--lora-dropout"] =
      sub->add_option("--lora-dropout", t->lora.dropout, "lora_dropout (default 0.05)")->option_text("P");
  f->given["--lora-alpha"] = sub->add_option("--lora-alpha", f->lora_alpha,
                                             "lora_alpha (scales the update; no memory effect)")
                                 ->option_text("A");
  add_loop_flags(sub, f);
  sub->add_flag("--json", f->json, "The plan as JSON");
}

// --lora-* without --lora-rank is a mistake worth naming.
std::string lora_from_flags(Flags* f) {
  Lora& l = f->t.lora;
  bool rank = f->given.at("--lora-rank")->count() > 0;
  for (const char* flag : {"--lora-targets", "--lora-dropout", "--lora-alpha"})
    if (!rank && f->given.at(flag)->count() > 0) return std::string(flag) + " needs --lora-rank R";
  if (rank && l.rank <= 0) return "--lora-rank must be a positive integer";
  if (!f->lora_targets.empty()) l.targets = split_commas(f->lora_targets);
  l.targets = lora_modules(l);  // the report names each adapted module once
  return "";
}

// The shape from --config FILE or --model NAME; exit status on failure.
int shape_from_file(Flags* f, std::string* warning) {
  std::string text, err;
  std::string source = f->config;
  if (!f->model.empty()) {
    const Preset* p = find_preset(f->model);
    if (!p) {
      if (f->model == "list") {
        std::fputs(format_report(PresetsReport{presets()}, format_of(f->json), Style{}).c_str(), stdout);
        return kExitOk;
      }
      std::string names;
      for (const auto& q : presets()) names += std::string("\n  ") + q.name;
      print_error("plan-memory: --model " + std::string(utf8_prefix(f->model, 80)) +
                  " is not a preset; use --config FILE for it, or one of:" + names);
      return kExitUsage;
    }
    text = p->config;
    source = p->name;
  } else if (!fs::read_file(f->config, &text, &err)) {
    print_error("plan-memory: cannot read --config: " + err);
    return kExitBadInput;
  }
  if (!shape_from_hf_config(text, &f->t.model, &err, warning)) {
    print_error("plan-memory: " + source + ": " + err);
    return kExitBadInput;
  }
  return -1;
}

// The shape from the flags; the message names the flag that is missing.
std::string shape_from_flags(Flags* f) {
  if (f->arch.empty()) return "--arch gpt2|llama is required (or --config FILE, or --model NAME)";
  f->t.model.arch = f->arch == "gpt2" ? Arch::kGpt2 : Arch::kLlama;
  for (const char* flag : {"--hidden", "--layers", "--heads", "--vocab"})
    if (f->given.at(flag)->count() == 0) return std::string(flag) + " is required with --arch";
  // 0 is how the code spells "the default": given on the command line it is a mistake.
  for (const char* flag : {"--kv-heads", "--ffn"})
    if (f->given.at(flag)->count() > 0 && (flag[2] == 'k' ? f->t.model.kv_heads : f->t.model.ffn) <= 0)
      return std::string(flag) + " must be a positive integer";
  return "";
}

// --db: where the plan is kept for the command the user will run.
void add_record_flags(CLI::App* sub, Flags* f) {
  f->record.sub = sub;
  sub->add_option("--db", f->record.db, "The job store for -- CMD (default: gpuenv.db under the cache root)")
      ->option_text("FILE");
}

// The flags the plan was made with, as given (in the order plan-memory declares them).
std::string given_flags(const CLI::App* sub) {
  static const std::set<std::string> kLeftOut = {"--help", "--json", "--db", "--cache-root", "--log-format"};
  std::vector<std::string> words;
  for (const CLI::Option* o : sub->get_options()) {
    if (o->count() == 0 || !o->nonpositional()) continue;
    std::string name = "--" + o->get_lnames().front();
    if (kLeftOut.count(name)) continue;
    words.push_back(name);
    if (o->get_items_expected_max() > 0)
      for (const auto& v : o->results()) words.push_back(v);
  }
  return command_text(words, 4096);
}

// Keeps the plan for `[--] CMD` (ctx->command; nothing without it) and says so; the exit status.
int record_plan(Context* ctx, const Flags& f, const MemoryPlan& p) {
  const std::vector<std::string>& cmd = ctx->command;
  if (cmd.empty()) return kExitOk;
  PlannedPeak plan;
  plan.peak_bytes = double(plan_bytes(p.estimate.peak_bytes()));  // as --json prints it
  plan.gpu = p.gpu ? p.gpu->name : "";
  plan.flags = given_flags(f.record.sub);
  std::string err, path = store::chosen_path(f.record.db, ctx->cache_root());
  if (!flow::record_planned_peak(path, cmd, plan, ctx->store_patience, &err)) {
    print_error("plan-memory: the plan was not recorded for " + command_text(cmd, 200) + ": " + err);
    return kExitFailure;
  }
  char gib[32];
  std::snprintf(gib, sizeof gib, "%.1f GiB", plan.peak_bytes / (1024.0 * 1024 * 1024));
  log_message(Severity::kInfo, "plan recorded",
              std::string("recorded the planned peak, ") + gib + " per GPU, for `" + command_text(cmd, 200) +
                  "` in this directory: `gpuenv report` compares it with the peak `gpuenv run -- " +
                  command_text(cmd, 200) + "` measures",
              {{"command", cmd}, {"peak_bytes_per_gpu", plan_bytes(plan.peak_bytes)}, {"store", path}});
  return kExitOk;
}

int run(Context* ctx, Flags* f) {
  Training& t = f->t;
  std::string warning;
  bool from_file = !f->config.empty() || !f->model.empty();
  if (from_file) {
    if (int code = shape_from_file(f, &warning); code >= 0) return code;
  } else if (std::string why = shape_from_flags(f); !why.empty()) {
    print_error("plan-memory: " + why);
    return kExitUsage;
  }
  if (f->tied || f->untied) t.model.tied = f->tied ? 1 : 0;
  if (std::string why = lora_from_flags(f); !why.empty()) {
    print_error("plan-memory: " + why);
    return kExitUsage;
  }
  for (const char* flag : {"--seq", "--batch"})
    if (f->given.at(flag)->count() == 0) {
      std::string hint = flag == std::string("--seq") && t.model.max_positions > 0
                             ? " (the model's max_position_embeddings is " +
                                   std::to_string(t.model.max_positions) +
                                   "; training usually runs shorter sequences)"
                             : "";
      print_error(std::string("plan-memory: ") + flag + " is required" + hint);
      return kExitUsage;
    }
  t.precision = pick(kPrecisions, f->precision);
  t.optimizer = pick(kOptimizers, f->optimizer);
  t.strategy = pick(kStrategies, f->strategy);
  t.attention = pick(kAttention, f->attention);
  t.loop = f->frees_logits ? Loop::kFreesLogits : Loop::kKeepsLogits;
  // A --config shape has been checked; what is left is the flags'.
  if (std::string why = training_problem(t, from_file); !why.empty()) {
    print_error("plan-memory: " + why);
    return kExitUsage;
  }
  Machine m;
  if (!ctx->load_machine(&m)) return kExitBadInput;
  MemoryPlan p = plan_memory(m, ctx->plan_options(m), t);
  p.loop_assumed = !f->keeps_logits && !f->frees_logits;
  if (!warning.empty()) p.notes.insert(p.notes.begin(), warning);
  if (!(p.estimate.peak_bytes() < 0x1p62)) {  // 4 EiB: no plan, and beyond exact arithmetic
    print_error("plan-memory: the predicted peak is more than 4 EiB per GPU: not a plan (smaller "
                "--seq, --batch or model)");
    return kExitUsage;
  }
  std::fputs(format_report(MemoryPlanReport{p}, format_of(f->json), Style{}).c_str(), stdout);
  return record_plan(ctx, *f, p);
}

}  // namespace

std::function<int()> setup_plan_memory(CLI::App* sub, Context* ctx) {
  auto f = std::make_shared<Flags>();
  add_shape_flags(sub, f.get());
  add_training_flags(sub, f.get());
  add_record_flags(sub, f.get());
  sub->footer(
      "Predicts the peak of torch.cuda.max_memory_allocated() per GPU for a training step "
      "(docs/memory.md). [--] CMD ... keeps the plan for the command you will run with gpuenv run, as "
      "gpuenv run takes it: every word from CMD on is the command's, its flags too. "
      "Exit status: 0 a plan (fits or not: see \"fits\"), 1 the plan could not be kept for CMD, "
      "2 bad flags, 3 a bad --config or --machine file.");
  ctx->add_common_flags(sub, kSensingFlags | kFlagOverride);
  return [ctx, f] { return run(ctx, f.get()); };
}

}  // namespace gpuenv
