// gpuenv run's sequence (the flags: cli/cmd_run.h): the plan, the last
// verdict of this command, the tuning profile, then the command, watched
// (gpuenv stays its parent, records the job and says its verdict) or exec'd.
// docs/feedback.md.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/job.h"
#include "model/machine.h"
#include "model/plan.h"
#include "model/tune_profile.h"

namespace gpuenv {

/// What `gpuenv run` was asked.
struct RunRequest {
  std::vector<std::string> argv;   // the command
  std::string store;               // the job store's path (--db, else gpuenv.db under the cache root)
  std::optional<std::string> tune; // --tune[=SPEC]: its value; nullopt when not given
  bool no_tune = false;            // --no-tune
  bool no_watch = false;           // --no-watch
};

/// Senses the Machine and its Options (false: the reason is printed).
using SenseMachine = std::function<bool(Machine*, Options*)>;

/// gpuenv run: the plan (`warn` shows its notes), the last verdict of this
/// command, the tuning, then the command: watched unless --no-watch or
/// GPUENV_WATCH=0, else exec'd. Returns the command's exit code, or gpuenv's
/// (model/exit_codes.h) when it could not run it.
int watched_run(const RunRequest& r, const SenseMachine& sense, const std::function<void(const Plan&)>& warn);

/// The newest job of `argv` in this directory and rank (empty argv: the
/// newest watched job); nullopt when none, with a store error printed.
std::optional<Job> last_job(const std::string& store, const std::vector<std::string>& argv);

/// The tuning profile of the command `fp` (store/fingerprint.h); nullopt when
/// none, with a store error printed.
std::optional<TuneProfile> stored_profile(const std::string& store, const std::string& fp);

/// explain's "Feedback" section for `argv` (act/render/feedback_report.h),
/// read from the store; "" when nothing was stored.
std::string feedback_section(const std::string& store, const std::optional<std::string>& tune,
                             const std::vector<std::string>& argv);

}  // namespace gpuenv
