// Human-readable and JSON renderings of a Machine and a Plan.
#pragma once

#include <string>

#include "act/printable.h"
#include "model/machine.h"
#include "model/plan.h"

namespace gpuenv {

struct Style {
  bool color = false;  // ANSI colour: only on a TTY and without NO_COLOR
};

/// "1.5 GiB", "64.0 MiB", "512 B".
std::string human_bytes(std::uint64_t bytes);

/// CPU list in the kernel's range syntax: {0,1,2,3,8} -> "0-3,8".
std::string cpu_list(const std::vector<int>& cpus);

/// `gpuenv detect`: a line per GPU (MIG devices under it), the driver, the
/// host. The problems are render_problems's, for stderr.
std::string render_detect(const Machine& m, const Style& style);

/// Every sensing problem with its fix (NVIDIA, per GPU, host): detect's stderr.
std::string render_problems(const Machine& m, const Style& style);

/// `gpuenv explain`: the plan as a table (setting, value, why), then notes
/// and the CPU binding.
std::string render_explain(const Plan& plan, const Style& style);

/// `gpuenv explain --json`: settings with reasons and origins, notes, binding.
std::string plan_to_json(const Plan& plan);

}  // namespace gpuenv
