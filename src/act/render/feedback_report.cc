#include "act/render/feedback_report.h"

#include "act/render/job_report.h"
#include "act/render/printable.h"
#include "decide/verdict.h"

namespace gpuenv {

nlohmann::json report_json(const Feedback& f) {
  using nlohmann::json;
  if (!f.last && !f.asked) return nullptr;
  json j = {{"command_asked", f.asked}, {"last_job", nullptr}, {"tuning_profile", nullptr},
            {"tune_would_change", nullptr}};
  if (!f.last) return j;
  std::vector<Verdict> verdicts = verdicts_of(*f.last);
  j["last_job"] = job_report_json(*f.last, verdicts, f.firsts, f.plans);
  if (f.profile) {
    j["tuning_profile"] = profile_to_json(*f.profile);
    return j;
  }
  json changes = json::array();
  for (const auto& c : tune_changes(verdicts, f.choice))
    changes.push_back({{"name", c.name}, {"value", c.value}, {"refused", c.refused}});
  j["tune_would_change"] = changes;
  return j;
}

std::string report_text(const Feedback& f, const Style&) {
  return render_feedback(f.last, f.asked, f.profile, f.choice);
}

std::string refuse_hint(const std::string& name) {
  return "refuse: --tune=-" + name + " or " + kTuneSkipVar + "=" + name;
}

std::string render_feedback(const std::optional<Job>& last, bool asked, const std::optional<TuneProfile>& profile,
                            const TuneChoice& choice) {
  if (!last) return asked ? "\nFeedback: this command has not run under gpuenv run here yet.\n" : "";
  std::vector<Verdict> verdicts = verdicts_of(*last);
  std::string out = "\nFeedback from job " + std::to_string(last->id) + " (" + command_text(last->argv, 60) + ", " +
                    printable(last->started_at) + "):\n";
  for (const auto& v : verdicts) out += "  " + v.name + ": " + v.evidence + "\n    fix: " + v.fix + "\n";
  if (const auto& p = profile) {
    out += "  tuning profile: plain runs apply " + (p->kept.empty() ? std::string("nothing") : p->kept) +
           "; the next --tune " + (p->next.empty() ? std::string("applies nothing") : "applies " + p->next) +
           (p->settled ? " (the search has stopped)" : "") + "\n";
    if (!p->note.empty()) out += "    last: " + printable(p->note) + "\n";
    return out;
  }
  std::vector<TuneChange> changes = tune_changes(verdicts, choice);
  if (changes.empty()) return out + "  gpuenv run --tune would change nothing.\n";
  out += "  gpuenv run --tune sets, on each DataLoader that left them at their defaults:\n";
  for (const auto& c : changes)
    out += "    " + c.name + "=" + c.value + (c.refused ? "  (refused)" : "  (" + refuse_hint(c.name) + ")") + "\n";
  return out;
}

}  // namespace gpuenv
