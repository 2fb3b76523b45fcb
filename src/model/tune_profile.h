// A command's tuning profile (docs/feedback.md, "The tuning profile"): every
// measured run since `gpuenv run --tune` was first used for it, what the next
// --tune tries, and what plain runs apply. Pure data; decide/run/tune_search
// chooses, store/ keeps it (table tune_profiles).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace gpuenv {

/// The DataLoader settings --tune knows, in the order they are written.
const std::vector<std::string>& tune_setting_names();

/// The most DataLoader workers gpuenv suggests (decide/verdict.cc: a GPU's
/// share of the CPUs less one for the loop, at most this) and so the most a
/// settings text it writes holds; the search only goes down from there.
inline constexpr int kMaxTuneWorkers = 32;

/// The most workers a script's own num_workers may read in the record (the
/// hook's yours=, python/sitecustomize.py): beyond it, no count it reports.
inline constexpr int kMaxScriptWorkers = 1024;

/// "" when `settings` is what gpuenv writes ("" or "num_workers=N" with N in
/// 0..max_workers, "pin_memory=True|False", "persistent_workers=True|False",
/// comma-separated); else what is wrong with it, naming the item. A stored
/// settings text is applied to every run and handed to the Python hook; the
/// script's own settings (max_workers kMaxScriptWorkers) are only recorded.
std::string tune_settings_problem(const std::string& settings, int max_workers = kMaxTuneWorkers);

/// One finished run of the command, as the profile needs it.
struct TuneRun {
  std::int64_t job_id = 0;
  std::string at;                     // its start, RFC 3339
  std::string settings;               // what it applied: "num_workers=15,pin_memory=True"; "" untuned
  std::optional<double> steps_per_s;  // the job's own speed (JobSpeed), else unknown
  double wall_s = 0;                  // end to end
  std::optional<double> overhead_s;   // time to the first step + from the last step to the exit
  std::string yours;                  // settings --tune asked for that the script passed itself ("num_workers=4")
  friend bool operator==(const TuneRun&, const TuneRun&) = default;
};

inline constexpr std::size_t kMaxProfileRuns = 64;

struct TuneProfile {
  std::string command_fp;
  std::vector<TuneRun> runs;         // oldest first, at most kMaxProfileRuns
  std::string next;                  // what the next --tune applies
  std::string kept;                  // the best measured settings, what plain runs apply ("": untuned)
  std::vector<std::string> dropped;  // settings taken out because they hurt
  bool settled = false;              // the search has stopped
  std::string note;                  // the last decision, in words
  friend bool operator==(const TuneProfile&, const TuneProfile&) = default;
};

nlohmann::json profile_to_json(const TuneProfile& p);
/// Reads what profile_to_json wrote; false with "profile.runs[2].wall_s: ..." in *err,
/// also for a settings text or dropped name gpuenv would not have written.
bool profile_from_json(const nlohmann::json& j, TuneProfile* p, std::string* err);

}  // namespace gpuenv
