// explain's "Feedback" section: the last watched job's verdicts and what
// --tune would change, or what the tuning profile applies; as text, and as
// explain --json's "feedback" (act/render/report.h). docs/feedback.md.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "act/render/job_report.h"
#include "decide/run/tune.h"
#include "model/job.h"
#include "model/tune_profile.h"

namespace gpuenv {

/// The section for the last job (nullopt: none stored; `asked` says whether a
/// command was named, which then gets a line that it has not run yet), its
/// tuning profile (nullopt: none) and what --tune refuses (`choice`).
std::string render_feedback(const std::optional<Job>& last, bool asked, const std::optional<TuneProfile>& profile,
                            const TuneChoice& choice);

/// What the store holds about the command explain was asked about
/// (flow/command_history.h read_feedback reads it), as render_feedback takes it.
struct Feedback {
  std::optional<Job> last;             // the command's newest job; nullopt: none stored
  bool asked = false;                  // a command was named
  std::optional<TuneProfile> profile;  // its tuning profile; nullopt: none
  TuneChoice choice;                   // what --tune and GPUENV_TUNE_SKIP refuse
  FirstRuns firsts;                    // the command's first measured run: the job's speedup, as report has it
  PlannedPeaks plans;                  // the job's memory plan, as report has it
};

/// null when the text is empty (no job stored, no command named); else
/// {"command_asked", "last_job" (job_report_json, as `report --json ID`; null:
/// none stored), "tuning_profile" (profile_to_json; null: none, or no job),
/// "tune_would_change" ([{"name", "value", "refused"}] of the --tune lines;
/// null where the text shows none: no job, or a profile replaces them)}.
nlohmann::json report_json(const Feedback& f);
/// render_feedback's text.
std::string report_text(const Feedback& f, const Style& style);

/// How to refuse the setting `name`: "refuse: --tune=-NAME or GPUENV_TUNE_SKIP=NAME".
std::string refuse_hint(const std::string& name);

}  // namespace gpuenv
