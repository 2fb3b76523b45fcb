// `gpuenv plan-memory`: the plan as text and as JSON (docs/memory.md).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "act/render/machine_report.h"
#include "decide/memory/memory_plan.h"
#include "decide/memory/presets.h"

namespace gpuenv {

/// A plan's bytes as plan-memory prints them: whole bytes (0 for none),
/// clamped at 4 EiB. Report prints a kept plan's peak through it too.
std::uint64_t plan_bytes(double b);

/// The plan a plan-memory run made.
struct MemoryPlanReport {
  const memory::MemoryPlan& plan;
};
/// loop ("keeps-logits" or "frees-logits"), loop_assumed (neither flag
/// given), peak_bytes_per_gpu, components, phases, gpu, fits, margin_bytes,
/// largest_batch, advice, notes.
nlohmann::ordered_json report_json(const MemoryPlanReport& r);
/// The model line, the loop planned, the peak with its components, the GPU
/// budget, fit, largest batch and, when it does not fit, the changes in order.
std::string report_text(const MemoryPlanReport& r, const Style& style);

/// `--model list`: the presets plan-memory knows (memory::presets()).
struct PresetsReport {
  const std::vector<memory::Preset>& presets;
};
/// {"models": [{"name", "model_type", "config"}]} with each preset's config.json fields.
nlohmann::ordered_json report_json(const PresetsReport& r);
/// The presets' names, one a line.
std::string report_text(const PresetsReport& r, const Style& style);

}  // namespace gpuenv
