// `gpuenv run` and the command's tuning profile (decide/run/tune_search.h): what
// a run applies at its start (--tune: the profile's next try; a plain run:
// what the profile kept; --no-tune: nothing), and the profile refined by the
// finished job. docs/feedback.md, "The tuning profile".
#pragma once

#include <optional>
#include <string>

#include "decide/run/tune.h"
#include "model/job.h"
#include "model/tune_profile.h"

namespace gpuenv {

/// What a run does with the profile.
struct RunTuning {
  std::string settings;                // to apply: GPUENV_TUNE_DATALOADER's value ("": nothing)
  std::optional<TuneProfile> profile;  // refined when the job ends (nullopt: none in play)
  std::string line;                    // what to say at the start ("" nothing)
  bool loud = true;                    // false on ranks other than 0: their lines are rank 0's
};

/// Chooses from the stored profile (nullopt: none), the command's last job,
/// and what the user asked: --tune (`choice.enabled`), --no-tune, or neither.
RunTuning choose_tuning(const std::string& command_fp, const std::optional<TuneProfile>& stored,
                        const std::optional<Job>& last, const TuneChoice& choice, bool no_tune);

/// `settings` without the refused names.
std::string without_refused(const std::string& settings, const TuneChoice& choice);

/// Whether this process speaks for the job: rank 0, or no rank (RANK or SLURM_PROCID).
bool speaks_for_job(std::optional<int> rank);

}  // namespace gpuenv
