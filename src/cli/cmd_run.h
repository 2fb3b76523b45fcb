// gpuenv run's flags (the sequence: flow/run.h), which explain reads
// too for its feedback: docs/feedback.md.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "act/render/feedback_report.h"
#include "cli/context.h"

namespace gpuenv {

struct RunFlags {
  bool no_watch = false;
  bool no_tune = false;                // --no-tune: untuned, whatever the profile says
  std::string tune_value;              // what --tune[=SPEC] said
  CLI::Option* tune = nullptr;         // given at all?
  std::string db;                      // --db FILE
  std::optional<std::string> tune_spec() const;
};

/// --no-watch, --no-tune, --tune[=-NAME,...], --db.
void add_run_flags(CLI::App* sub, RunFlags* f);

/// gpuenv run (flow/run.h) with the flags and the command line.
/// Returns the command's exit code.
int run_command(Context* ctx, const RunFlags& f, const std::function<void(const Plan&)>& warn);

/// explain's feedback for `argv` (empty: the newest watched job): the last
/// verdict and what --tune would change (flow/command_history.h read_feedback).
Feedback read_feedback(Context* ctx, const RunFlags& f, const std::vector<std::string>& argv);

}  // namespace gpuenv
