// `gpuenv run --tune` across runs: which settings to try next, which to keep
// and which to drop, judged by the job's own speed and its wall time against
// the command's untuned runs (docs/feedback.md, "The tuning profile"). Pure.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "decide/verdict.h"
#include "model/job.h"
#include "model/tune_profile.h"

namespace gpuenv {

using TuneSettings = std::map<std::string, std::string>;
/// "num_workers=15,pin_memory=True" <-> {{"num_workers","15"},...}; written
/// in tune_setting_names() order, unknown names and empty values left out.
TuneSettings parse_settings(const std::string& text);
std::string settings_text(const TuneSettings& s);

/// The smallest relative difference that counts (0.05), or more: the largest
/// spread (max - min) / median of the steps/s or the wall time of runs with
/// the same settings; at most 0.5.
double tune_noise(const TuneProfile& p);

/// The median figures of the runs with one settings text.
struct TuneSummary {
  std::optional<double> steps_per_s, overhead_s;
  double wall_s = 0;
  int runs = 0;
};
std::map<std::string, TuneSummary> summarize(const TuneProfile& p);

/// How `settings` compares with the untuned runs: speed (steps/s ratio, or
/// the wall-time ratio inverted when steps are unknown) and the wall-time
/// ratio; nullopt when either side was never measured.
struct TuneGain {
  double speed = 1, wall = 1;
  bool steps_known = false;
};
std::optional<TuneGain> gain_of(const TuneProfile& p, const std::string& settings);

/// A run as the profile keeps it.
TuneRun tune_run(const Job& job);

/// The profile of a command whose last run (`baseline`, untuned) is about to
/// be tuned for the first time: the next settings are its verdicts'.
TuneProfile start_profile(const std::string& command_fp, const TuneRun& baseline, const std::vector<Verdict>& verdicts);

/// Folds a finished run (tuned or not) into the profile and chooses `next`
/// and `kept`: a setting is kept when it made the job faster by more than the
/// noise without making its wall time longer by more than the noise; when a
/// run was slower end to end, persistent_workers goes first where the start
/// and the exit grew, then the workers are cut; num_workers is searched
/// downward (x3/4) while each step down is better than the one before beyond
/// the noise, and a step that is not settles the search on the better of the
/// two (the fewer workers when as good); settings the run's verdicts name that
/// were not tried are added, never one a run's script passed itself
/// (TuneRun::yours: --tune cannot apply it, so it is not searched). Returns
/// what changed, in words, for stderr.
std::vector<std::string> refine_profile(TuneProfile* p, const TuneRun& run, const std::vector<Verdict>& verdicts);

/// One line for the start of a run that applies `settings` from the profile.
std::string profile_line(const TuneProfile& p, const std::string& settings);

}  // namespace gpuenv
