// What the job store holds about a command `gpuenv run` runs: its newest job
// and tuning profile (read before the job: run's last verdict and tuning,
// explain's feedback), and the memory plans kept for it (plan-memory -- CMD).
// Commands are keyed by their fingerprint in the working directory
// (store/fingerprint.h). docs/feedback.md.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "act/log.h"
#include "act/render/feedback_report.h"
#include "model/job.h"
#include "model/tune_profile.h"
#include "store/store.h"

namespace gpuenv::flow {

/// The fingerprint `gpuenv run -- argv` keeps its jobs under when run in
/// the directory `cwd`: the same command for the last job, --tune's profile
/// and plan-memory's `-- CMD`.
std::string command_fingerprint_in(const std::vector<std::string>& argv, const std::string& cwd);

/// command_fingerprint_in this process's working directory.
std::string command_fingerprint_here(const std::vector<std::string>& argv);

/// A launcher's count for this process: the variable `name`, else
/// `fallback` (RANK, else SLURM_PROCID), as `get` reads them ("" unset);
/// nullopt when neither is a count (decide/launcher_env.h: parse_count).
std::optional<int> launcher_count(const std::function<std::string(const char*)>& get, const char* name = "RANK",
                                  const char* fallback = "SLURM_PROCID");

/// What the store holds about one command before it runs.
struct CommandHistory {
  std::optional<Job> last;             // its newest job (preferring the rank's); nullopt: none
  std::optional<TuneProfile> profile;  // its tuning profile; nullopt: none
  std::optional<Job> first;            // with `for_report`: the last job's command's first measured run
  std::optional<PlannedPeak> plan;     // with `for_report`: the last job's memory plan
};

/// The newest job of the command `fp` by `rank` (else any rank) and its
/// tuning profile, read in one open of the store at `store` (never created);
/// with `fp` "", the newest watched job of any command and its profile. A
/// store error is said on `log` and leaves out what it hid (none once
/// `patience` found the store locked: said then). `for_report`: also what
/// `gpuenv report ID` shows the last job with (its command's first run and
/// its memory plan).
CommandHistory read_history(const std::string& store, const std::string& fp, std::optional<int> rank,
                            const store::Patience& patience, const MessageSink& log = log_message,
                            bool for_report = false);

/// `gpuenv plan-memory FLAGS -- CMD`: keeps `plan` (its command_fp and
/// planned_at are filled here) against the command `gpuenv run -- command`
/// will record from this directory, in the store at `store`; false with *err.
bool record_planned_peak(const std::string& store, const std::vector<std::string>& command, PlannedPeak plan,
                         const store::Patience& patience, std::string* err);

/// explain's feedback for `argv` (act/render/feedback_report.h; empty: the
/// newest watched job), read from the store in one open; no job when none was
/// stored (or it was locked). `tune`: --tune's value, nullopt when not given.
Feedback read_feedback(const std::string& store, const std::optional<std::string>& tune,
                       const std::vector<std::string>& argv, const store::Patience& patience);

}  // namespace gpuenv::flow
