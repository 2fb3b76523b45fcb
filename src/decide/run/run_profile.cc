#include "decide/run/run_profile.h"

#include "decide/run/tune_search.h"
#include "decide/verdict.h"

namespace gpuenv {

std::string without_refused(const std::string& settings, const TuneChoice& choice) {
  TuneSettings s = parse_settings(settings);
  for (const auto& name : choice.refused) s.erase(name);
  return settings_text(s);
}

bool speaks_for_job(std::optional<int> rank) { return !rank || *rank == 0; }

RunTuning choose_tuning(const std::string& command_fp, const std::optional<TuneProfile>& stored,
                        const std::optional<Job>& last, const TuneChoice& choice, bool no_tune) {
  RunTuning t;
  t.profile = stored;
  if (no_tune) {
    if (stored) t.line = "--no-tune: runs untuned (the tuning profile of this command stays, and learns from this run)";
    return t;
  }
  if (!choice.enabled) {
    if (!stored) return t;
    t.settings = without_refused(stored->kept, choice);
    t.line = profile_line(*stored, t.settings) + "; --no-tune runs without it";
    return t;
  }
  if (!stored) {
    if (!last) {
      t.line = "--tune: nothing to apply: this command has not run under gpuenv run before";
      return t;
    }
    TuneProfile p = start_profile(command_fp, tune_run(*last), verdicts_of(*last));
    t.settings = without_refused(p.next, choice);
    if (t.settings.empty()) {
      t.line = "--tune: nothing to apply: the last run of this command needs no DataLoader change, or you refused it";
      return t;
    }
    t.profile = std::move(p);
    t.line = "--tune: DataLoaders left at their defaults get " + t.settings +
             " (refuse one: --tune=-NAME); this command now has a tuning profile";
    return t;
  }
  t.settings = without_refused(stored->next, choice);
  if (t.settings.empty())
    t.line = "--tune: the tuning profile of this command applies nothing" +
             std::string(stored->note.empty() ? "" : ": " + stored->note);
  else
    t.line = "--tune: DataLoaders left at their defaults get " + t.settings + " (" +
             (stored->settled ? "the tuning profile's choice" : "the tuning profile's next try") +
             (stored->note.empty() ? "" : "; " + stored->note) + ")";
  return t;
}

}  // namespace gpuenv
