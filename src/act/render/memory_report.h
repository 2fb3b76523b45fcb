// `gpuenv plan-memory`: the plan as text and as JSON (docs/memory.md).
#pragma once

#include <string>

#include "decide/memory/memory_plan.h"

namespace gpuenv {

/// The model line, the loop planned, the peak with its components, the GPU
/// budget, fit, largest batch and, when it does not fit, the changes in order.
std::string render_memory_plan(const memory::MemoryPlan& p);

/// The same as JSON: loop ("keeps-logits" or "frees-logits"), loop_assumed
/// (neither flag given), peak_bytes_per_gpu, components, phases, gpu, fits,
/// margin_bytes, largest_batch, advice, notes.
std::string memory_plan_to_json(const memory::MemoryPlan& p);

/// `--model list`: the presets' names, one a line; as JSON, {"models":
/// [{"name", "model_type", "config"}]} with each preset's config.json fields.
std::string render_presets();
std::string presets_to_json();

}  // namespace gpuenv
