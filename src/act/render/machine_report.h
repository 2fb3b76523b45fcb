// Human-readable and JSON renderings of a Machine and a Plan.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "act/log.h"
#include "act/render/printable.h"
#include "model/machine.h"
#include "model/plan.h"
#include "sys/bytes.h"  // human_bytes, for the reports

namespace gpuenv {

struct Style {
  bool color = false;  // ANSI colour: only on a TTY and without NO_COLOR
};

/// CPU list in the kernel's range syntax: {0,1,2,3,8} -> "0-3,8".
std::string cpu_list(const std::vector<int>& cpus);

/// `gpuenv detect`: a line per GPU (MIG devices under it), the driver, the
/// host. The problems are render_problems's, for stderr.
std::string render_detect(const Machine& m, const Style& style);

/// Every sensing problem with its fix (NVIDIA, per GPU, host): detect's stderr.
std::string render_problems(const Machine& m, const Style& style);

/// The same problems as log events "problem" (act/log.h), whose text is
/// render_problems's lines: errors when the driver fails (decide/health.h
/// driver_fails), warnings otherwise.
std::vector<LogEvent> problem_events(const Machine& m, const Style& style);

/// `gpuenv explain`: the plan as a table (setting, value, why), then notes
/// and the CPU binding. With `columns` (a terminal's width), the VALUE
/// column takes at most two fifths of what SETTING leaves (12 to 40), a
/// longer value is shortened in the middle with an ellipsis (and a line
/// under the table says so), and the WHY column is wrapped to fit, its
/// continuation lines indented under it; 0 (a pipe, a file, `--wide`):
/// every value whole and each row on one line, whatever its length.
std::string render_explain(const Plan& plan, const Style& style, std::size_t columns = 0);

/// `text` broken at spaces into lines of at most `first` columns for the
/// first line and `width` for the others (columns are UTF-8 code points).
/// A word longer than its line stays whole on a line of its own; 0 means
/// no limit. Runs of spaces where a line breaks are dropped.
std::vector<std::string> wrap_words(std::string_view text, std::size_t first, std::size_t width);

/// The plan as JSON: settings with reasons and origins, notes, binding,
/// launcher (`explain --json`, and the plan a watched job keeps).
nlohmann::ordered_json plan_json(const Plan& plan);

/// `gpuenv detect`: the machine; its JSON face is the snapshot
/// (model/snapshot.h), its text render_detect's summary.
struct DetectReport {
  const Machine& machine;
};
nlohmann::json report_json(const DetectReport& r);
std::string report_text(const DetectReport& r, const Style& style);

struct Feedback;  // act/render/feedback_report.h

/// `gpuenv explain`: the plan; its text is render_explain's table at
/// `columns` (0: every value whole), its JSON plan_json. With `feedback`,
/// the text ends with its section and the JSON has it as "feedback", the
/// plan's last key (null where the text has no section).
struct ExplainReport {
  const Plan& plan;
  std::size_t columns = 0;
  const Feedback* feedback = nullptr;
};
nlohmann::ordered_json report_json(const ExplainReport& r);
std::string report_text(const ExplainReport& r, const Style& style);

}  // namespace gpuenv
