#include "act/render/memory_report.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "act/render/machine_report.h"
#include "decide/memory/presets.h"

namespace gpuenv {
namespace {

using memory::Breakdown;
using nlohmann::ordered_json;


std::string family_name(const memory::ModelShape& m) {
  return m.family ? m.model_type : memory::arch_name(m.arch);
}

std::string lora_text(const memory::Training& t) {
  if (t.lora.rank == 0) return "";
  std::string targets;
  for (const auto& x : t.lora.targets) targets += (targets.empty() ? "" : ",") + x;
  return fmt::format(", LoRA rank {} on {} (dropout {:g})", t.lora.rank, targets, t.lora.dropout);
}
std::string gib(double b) { return human_bytes(plan_bytes(b)); }

std::string model_line(const memory::MemoryPlan& p, double params) {
  const memory::Training& t = p.training;
  memory::ModelShape m = memory::with_defaults(t.model);
  std::string opt = memory::optimizer_name(t.optimizer);
  if (t.optimizer == memory::Optimizer::kAdamW) opt += t.fused_optimizer ? " (fused)" : " (foreach)";
  return fmt::format(
      "{}{}: {:.0f} M parameters (hidden {}, {} layers, {} heads / {} kv, head dim {}, ffn {}{}, "
      "vocab {}, {}); batch {} x seq {}, {}, {}{}{}, {} GPU(s), {}",
      m.family ? "" : "plain ", family_name(m), params / 1e6, m.hidden, m.layers, m.heads,
      m.kv_heads, memory::head_dim_of(m), m.ffn,
      m.experts ? fmt::format(" x {} experts, top {}", m.experts, m.top_k) : "", m.vocab,
      m.tied ? "tied" : "untied", t.batch, t.seq, memory::precision_name(t.precision), opt,
      t.checkpointing ? ", checkpointing" : "", lora_text(t), t.gpus,
      memory::strategy_name(t.strategy));
}

const std::pair<const char*, double Breakdown::*> kComponents[] = {
    {"weights", &Breakdown::weights},
    {"gradients", &Breakdown::gradients},
    {"optimizer_states", &Breakdown::optimizer_states},
    {"activations", &Breakdown::activations},
    {"logits_loss", &Breakdown::logits_loss},
    {"temporaries", &Breakdown::temporaries},
    {"allocator_overhead", &Breakdown::allocator_overhead},
    {"held_logits", &Breakdown::held_logits},
};

// Which loop was planned, and the flag for the other.
std::string loop_line(const memory::MemoryPlan& p) {
  if (p.training.loop == memory::Loop::kFreesLogits)
    return "Loop: only the loss survives the forward, the logits are freed (--frees-logits; "
           "--keeps-logits if the loop holds the model's outputs through backward, as nanoGPT's "
           "logits, loss = model(X, Y))\n";
  return fmt::format(
      "Loop: keeps the logits through backward, {} held (--keeps-logits{}; --frees-logits if only "
      "the loss survives the forward, as in Hugging Face Trainer)\n",
      gib(p.estimate.peak_phase().bytes.held_logits), p.loop_assumed ? ", the default" : "");
}

std::string fit_lines(const memory::MemoryPlan& p) {
  if (!p.gpu) return "";
  std::string out = fmt::format(
      "GPU: {} (smallest of {} visible), {}; budget {} (less {} for the CUDA context, {:.0f} % "
      "allocator reserve)\n",
      p.gpu->name, p.gpu->visible, gib(p.gpu->total_bytes), gib(p.gpu->budget_bytes),
      gib(memory::kContextBytes + (p.training.gpus > 1 ? memory::kNcclBytes : 0)),
      memory::kAllocatorReserve * 100);
  out += "Allocator: " + printable(p.allocator.source) +
         (p.allocator.expandable_segments
              ? ": expandable segments, freed memory is reused in place\n"
              : fmt::format(": the default caching allocator, {} a freed block may strand is counted\n",
                            gib(p.allocator.stranded_bytes)));
  out += *p.fits ? fmt::format("Fits: yes, {} to spare", gib(p.margin_bytes))
                 : fmt::format("Fits: no, {} short", gib(-p.margin_bytes));
  out += fmt::format("; largest batch that fits: {}\n", *p.largest_batch);
  if (p.advice.empty()) return out;
  out += "\nCheaper changes, in order (each adds to those above it):\n";
  for (size_t i = 0; i < p.advice.size(); ++i) {
    const auto& c = p.advice[i];
    out += fmt::format("  {}. {:<16} peak {:>10}  {}\n     cost: {}\n", i + 1, c.change,
                       gib(c.peak_bytes), c.fits ? "fits" : "does not fit", c.cost);
  }
  if (!p.advice.back().fits) out += "  Nothing above makes it fit on these GPUs.\n";
  return out;
}

}  // namespace

// Plans are bounded far below 2^62 (training_problem); clamp anyway.
std::uint64_t plan_bytes(double b) {
  if (!(b > 0)) return 0;
  return b >= 0x1p62 ? std::uint64_t(1) << 62 : std::uint64_t(std::llround(b));
}

std::string report_text(const MemoryPlanReport& r, const Style&) {
  const memory::MemoryPlan& p = r.plan;
  const memory::Estimate& e = p.estimate;
  const memory::Phase& peak = e.peak_phase();
  std::string out = printable(model_line(p, e.parameters)) + "\n";
  out += "Attention: " + e.attention_reason + "\n";
  out += loop_line(p);
  out += fmt::format("Peak per GPU: {} (predicted torch.cuda.max_memory_allocated()), at {}:\n  {}\n",
                     gib(e.peak_bytes()), peak.name, peak.what);
  for (const auto& [name, field] : kComponents)
    out += fmt::format("  {:<20}{:>12}\n", name, gib(peak.bytes.*field));
  out += fit_lines(p);
  for (const auto& n : p.notes) out += "note: " + printable(n) + "\n";
  return out;
}

namespace {

ordered_json components_json(const Breakdown& b) {
  ordered_json j;
  for (const auto& [name, field] : kComponents) j[name] = plan_bytes(b.*field);
  return j;
}

ordered_json lora_json(const memory::Training& t, double trainable) {
  if (t.lora.rank == 0) return nullptr;
  return {{"rank", t.lora.rank}, {"targets", t.lora.targets}, {"dropout", t.lora.dropout},
          {"trainable_parameters", plan_bytes(trainable)}};
}

ordered_json model_json(const memory::MemoryPlan& p, double params) {
  const memory::Training& t = p.training;
  memory::ModelShape m = memory::with_defaults(t.model);
  return {{"arch", family_name(m)}, {"implementation", m.family ? "transformers" : "plain"},
          {"parameters", plan_bytes(params)},
          {"hidden", m.hidden}, {"layers", m.layers}, {"heads", m.heads},
          {"kv_heads", m.kv_heads}, {"head_dim", memory::head_dim_of(m)}, {"ffn", m.ffn},
          {"experts", m.experts}, {"top_k", m.top_k}, {"vocab", m.vocab}, {"tied", m.tied == 1},
          {"lora", lora_json(t, p.estimate.trainable)},
          {"seq", t.seq}, {"batch", t.batch}, {"precision", memory::precision_name(t.precision)},
          {"optimizer", memory::optimizer_name(t.optimizer)},
          {"fused_optimizer", t.fused_optimizer}, {"checkpointing", t.checkpointing},
          {"gpus", t.gpus}, {"strategy", memory::strategy_name(t.strategy)},
          {"fsdp_mixed_precision", t.fsdp_bf16}};
}

}  // namespace

ordered_json report_json(const MemoryPlanReport& r) {
  const memory::MemoryPlan& p = r.plan;
  const memory::Estimate& e = p.estimate;
  ordered_json j;
  j["model"] = model_json(p, e.parameters);
  j["attention"] = e.attention == memory::Attention::kMath ? "math" : "fused";
  j["attention_reason"] = e.attention_reason;
  j["loop"] = memory::loop_name(p.training.loop);
  j["loop_assumed"] = p.loop_assumed;
  j["peak_bytes_per_gpu"] = plan_bytes(e.peak_bytes());
  j["peak_phase"] = e.peak_phase().name;
  j["components"] = components_json(e.peak_phase().bytes);
  ordered_json phases = ordered_json::object();
  for (const auto& ph : e.phases) phases[ph.name] = plan_bytes(ph.bytes.total());
  j["phases"] = phases;
  if (p.gpu) {
    j["gpu"] = {{"name", p.gpu->name}, {"memory_total_bytes", plan_bytes(p.gpu->total_bytes)},
                {"visible", p.gpu->visible}, {"budget_bytes", plan_bytes(p.gpu->budget_bytes)}};
    j["allocator"] = {{"expandable_segments", p.allocator.expandable_segments},
                      {"source", p.allocator.source},
                      {"stranded_bytes", plan_bytes(p.allocator.stranded_bytes)}};
    j["fits"] = *p.fits;
    j["margin_bytes"] = std::llround(p.margin_bytes);
    j["largest_batch"] = *p.largest_batch;
  } else {
    j["gpu"] = nullptr;
    j["fits"] = nullptr;
    j["margin_bytes"] = nullptr;
    j["largest_batch"] = nullptr;
  }
  ordered_json advice = ordered_json::array();
  for (const auto& c : p.advice)
    advice.push_back({{"change", c.change}, {"peak_bytes_per_gpu", plan_bytes(c.peak_bytes)},
                      {"fits", c.fits}, {"cost", c.cost}});
  j["advice"] = advice;
  j["notes"] = p.notes;
  return j;
}

std::string report_text(const PresetsReport& r, const Style&) {
  std::string out;
  for (const auto& p : r.presets) out += std::string("  ") + p.name + "\n";
  return out;
}

ordered_json report_json(const PresetsReport& r) {
  ordered_json models = ordered_json::array();
  for (const auto& p : r.presets) {
    ordered_json config = ordered_json::parse(p.config);  // the table's own text: tested to parse
    models.push_back({{"name", p.name}, {"model_type", config.value("model_type", "")}, {"config", config}});
  }
  return ordered_json{{"models", models}};
}

}  // namespace gpuenv
