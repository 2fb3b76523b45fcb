// explain's "Feedback" section: the last watched job's verdicts and what
// --tune would change, or what the tuning profile applies. docs/feedback.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "decide/run/tune.h"
#include "model/job.h"
#include "model/tune_profile.h"

namespace gpuenv {

/// The section for the last job (nullopt: none stored; `asked` says whether a
/// command was named, which then gets a line that it has not run yet), its
/// tuning profile (nullopt: none) and what --tune refuses (`choice`).
std::string render_feedback(const std::optional<Job>& last, bool asked, const std::optional<TuneProfile>& profile,
                            const TuneChoice& choice);

/// How to refuse the setting `name`: "refuse: --tune=-NAME or GPUENV_TUNE_SKIP=NAME".
std::string refuse_hint(const std::string& name);

}  // namespace gpuenv
