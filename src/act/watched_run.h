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
#include "store/store.h"

namespace gpuenv {

/// What `gpuenv run` was asked.
struct RunRequest {
  std::vector<std::string> argv;   // the command
  std::string store;               // the job store's path (--db, else gpuenv.db under the cache root)
  std::optional<std::string> tune; // --tune[=SPEC]: its value; nullopt when not given
  bool no_tune = false;            // --no-tune
  bool no_watch = false;           // --no-watch
  // The reads before the job (the last verdict, the tuning profile) wait for a store another
  // process holds no longer than this, which sensing's read shares: the job starts within
  // store::kStorePatience of gpuenv whatever the store does, at once when a stop signal is pending.
  store::Patience patience;
};

/// Senses the Machine and its Options (false: the reason is printed).
using SenseMachine = std::function<bool(Machine*, Options*)>;

/// gpuenv run: the plan (`warn` shows its notes), the last verdict of this
/// command, the tuning, then the command: watched unless --no-watch or
/// GPUENV_WATCH=0, else exec'd. Returns the command's exit code, or gpuenv's
/// (model/exit_codes.h) when it could not run it.
int watched_run(const RunRequest& r, const SenseMachine& sense, const std::function<void(const Plan&)>& warn);

/// The fingerprint `gpuenv run -- argv` keeps its jobs under when run in
/// this process's working directory (store/fingerprint.h): the same
/// command for last_job, --tune's profile and plan-memory's `-- CMD`.
std::string command_fingerprint_here(const std::vector<std::string>& argv);

/// `gpuenv plan-memory FLAGS -- CMD`: keeps `plan` (its command_fp and
/// planned_at are filled here) against the command `gpuenv run -- command`
/// will record from this directory, in the store at `store`; false with *err.
bool record_planned_peak(const std::string& store, const std::vector<std::string>& command, PlannedPeak plan,
                         const store::Patience& patience, std::string* err);

/// The newest job of `argv` in this directory and rank (empty argv: the
/// newest watched job); nullopt when none, with a store error printed
/// (none once `patience` found the store locked: said then).
std::optional<Job> last_job(const std::string& store, const std::vector<std::string>& argv,
                            const store::Patience& patience);

/// The tuning profile of the command `fp` (store/fingerprint.h); nullopt when
/// none, with a store error printed, as last_job's.
std::optional<TuneProfile> stored_profile(const std::string& store, const std::string& fp,
                                          const store::Patience& patience);

/// explain's "Feedback" section for `argv` (act/render/feedback_report.h),
/// read from the store; "" when nothing was stored (or it was locked).
std::string feedback_section(const std::string& store, const std::optional<std::string>& tune,
                             const std::vector<std::string>& argv, const store::Patience& patience);

}  // namespace gpuenv
