#include "act/memory_report.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "act/report.h"

namespace gpuenv {
namespace {

using memory::Breakdown;
using nlohmann::ordered_json;

std::uint64_t bytes(double b) { return b <= 0 ? 0 : std::uint64_t(std::llround(b)); }
std::string gib(double b) { return human_bytes(bytes(b)); }

std::string model_line(const memory::MemoryPlan& p, double params) {
  const memory::Training& t = p.training;
  memory::ModelShape m = memory::with_defaults(t.model);
  std::string opt = memory::optimizer_name(t.optimizer);
  if (t.optimizer == memory::Optimizer::kAdamW) opt += t.fused_optimizer ? " (fused)" : " (foreach)";
  return fmt::format(
      "{}: {:.0f} M parameters (hidden {}, {} layers, {} heads / {} kv, ffn {}, vocab {}, {}); "
      "batch {} x seq {}, {}, {}{}, {} GPU(s), {}",
      memory::arch_name(m.arch), params / 1e6, m.hidden, m.layers, m.heads, m.kv_heads, m.ffn,
      m.vocab, m.tied ? "tied" : "untied", t.batch, t.seq, memory::precision_name(t.precision),
      opt, t.checkpointing ? ", checkpointing" : "", t.gpus, memory::strategy_name(t.strategy));
}

const std::pair<const char*, double Breakdown::*> kComponents[] = {
    {"weights", &Breakdown::weights},
    {"gradients", &Breakdown::gradients},
    {"optimizer_states", &Breakdown::optimizer_states},
    {"activations", &Breakdown::activations},
    {"logits_loss", &Breakdown::logits_loss},
    {"temporaries", &Breakdown::temporaries},
    {"allocator_overhead", &Breakdown::allocator_overhead},
};

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

std::string render_memory_plan(const memory::MemoryPlan& p) {
  const memory::Estimate& e = p.estimate;
  const memory::Phase& peak = e.peak_phase();
  std::string out = printable(model_line(p, e.parameters)) + "\n";
  out += "Attention: " + e.attention_reason + "\n";
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
  for (const auto& [name, field] : kComponents) j[name] = bytes(b.*field);
  return j;
}

ordered_json model_json(const memory::MemoryPlan& p, double params) {
  const memory::Training& t = p.training;
  memory::ModelShape m = memory::with_defaults(t.model);
  return {{"arch", memory::arch_name(m.arch)}, {"parameters", bytes(params)},
          {"hidden", m.hidden}, {"layers", m.layers}, {"heads", m.heads},
          {"kv_heads", m.kv_heads}, {"ffn", m.ffn}, {"vocab", m.vocab}, {"tied", m.tied == 1},
          {"seq", t.seq}, {"batch", t.batch}, {"precision", memory::precision_name(t.precision)},
          {"optimizer", memory::optimizer_name(t.optimizer)},
          {"fused_optimizer", t.fused_optimizer}, {"checkpointing", t.checkpointing},
          {"gpus", t.gpus}, {"strategy", memory::strategy_name(t.strategy)}};
}

}  // namespace

std::string memory_plan_to_json(const memory::MemoryPlan& p) {
  const memory::Estimate& e = p.estimate;
  ordered_json j;
  j["model"] = model_json(p, e.parameters);
  j["attention"] = e.attention == memory::Attention::kMath ? "math" : "fused";
  j["attention_reason"] = e.attention_reason;
  j["peak_bytes_per_gpu"] = bytes(e.peak_bytes());
  j["peak_phase"] = e.peak_phase().name;
  j["components"] = components_json(e.peak_phase().bytes);
  ordered_json phases = ordered_json::object();
  for (const auto& ph : e.phases) phases[ph.name] = bytes(ph.bytes.total());
  j["phases"] = phases;
  if (p.gpu) {
    j["gpu"] = {{"name", p.gpu->name}, {"memory_total_bytes", bytes(p.gpu->total_bytes)},
                {"visible", p.gpu->visible}, {"budget_bytes", bytes(p.gpu->budget_bytes)}};
    j["allocator"] = {{"expandable_segments", p.allocator.expandable_segments},
                      {"source", p.allocator.source},
                      {"stranded_bytes", bytes(p.allocator.stranded_bytes)}};
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
    advice.push_back({{"change", c.change}, {"peak_bytes_per_gpu", bytes(c.peak_bytes)},
                      {"fits", c.fits}, {"cost", c.cost}});
  j["advice"] = advice;
  j["notes"] = p.notes;
  return j.dump(2) + "\n";
}

}  // namespace gpuenv
