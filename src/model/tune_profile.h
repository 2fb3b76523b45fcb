// A command's tuning profile (docs/feedback.md, "The tuning profile"): every
// measured run since `gpuenv run --tune` was first used for it, what the next
// --tune tries, and what plain runs apply. Pure data; decide/tune_search
// chooses, store/ keeps it (table tune_profiles).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace gpuenv {

/// One finished run of the command, as the profile needs it.
struct TuneRun {
  std::int64_t job_id = 0;
  std::string at;                     // its start, RFC 3339
  std::string settings;               // what it applied: "num_workers=15,pin_memory=True"; "" untuned
  std::optional<double> steps_per_s;  // the job's own speed (JobSpeed), else unknown
  double wall_s = 0;                  // end to end
  std::optional<double> overhead_s;   // time to the first step + from the last step to the exit
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
/// Reads what profile_to_json wrote; false with "profile.runs[2].wall_s: ..." in *err.
bool profile_from_json(const nlohmann::json& j, TuneProfile* p, std::string* err);

}  // namespace gpuenv
