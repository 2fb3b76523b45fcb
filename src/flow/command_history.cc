#include "flow/command_history.h"

#include <filesystem>

#include "act/render/feedback_report.h"
#include "decide/launcher_env.h"
#include "decide/run/tune.h"
#include "store/fingerprint.h"
#include "sys/env.h"
#include "sys/text.h"

namespace gpuenv::flow {
namespace {

void say(const MessageSink& log, const std::string& err, const char* left_out) {
  if (!err.empty())
    log(Severity::kError, "error", "the job store: " + err + " (" + left_out + ")", nlohmann::ordered_json::object());
}

}  // namespace

std::string command_fingerprint_in(const std::vector<std::string>& argv, const std::string& cwd) {
  return store::command_fingerprint(argv, cwd);
}

std::string command_fingerprint_here(const std::vector<std::string>& argv) {
  std::error_code ec;
  return command_fingerprint_in(argv, std::filesystem::current_path(ec).string());
}

std::optional<int> launcher_count(const std::function<std::string(const char*)>& get, const char* name,
                                  const char* fallback) {
  for (const char* n : {name, fallback})
    if (auto v = parse_count(get(n))) return v;
  return std::nullopt;
}

CommandHistory read_history(const std::string& store, const std::string& fp, std::optional<int> rank,
                            const store::Patience& patience, const MessageSink& log, bool for_report) {
  CommandHistory h;
  std::string err;
  auto db = store::Store::open_existing(store, &err, patience);
  if (!db) return say(log, err, "the last verdict and the tuning profile are left out"), h;
  if (fp.empty()) {
    std::vector<Job> jobs;
    if (db->recent_jobs(1, &jobs, &err) && !jobs.empty()) h.last = std::move(jobs[0]);
  } else {
    db->last_job(fp, rank, &h.last, &err);
  }
  say(log, err, "the last verdict is left out");
  err.clear();
  std::string profile_fp = fp.empty() && h.last ? h.last->command_fp : fp;
  if (!profile_fp.empty()) db->profile(profile_fp, &h.profile, &err);
  say(log, err, "the tuning profile is left out");
  if (!for_report || !h.last) return h;
  err.clear();
  db->first_job(h.last->command_fp, &h.first, &err);
  say(log, err, "the speed-up over the first run is left out");
  err.clear();
  db->planned_peak(h.last->command_fp, h.last->started_at, &h.plan, &err);
  say(log, err, "the memory plan is left out");
  return h;
}

bool record_planned_peak(const std::string& store, const std::vector<std::string>& command, PlannedPeak plan,
                         const store::Patience& patience, std::string* err) {
  plan.command_fp = command_fingerprint_here(command);
  plan.planned_at = utc_now();
  auto db = store::Store::open(store, err, patience);
  return db && db->add_planned_peak(plan, err);
}

Feedback read_feedback(const std::string& store, const std::optional<std::string>& tune,
                       const std::vector<std::string>& argv, const store::Patience& patience) {
  auto get = [](const char* name) { return env_or(name, ""); };
  std::string fp = argv.empty() ? "" : command_fingerprint_here(argv);
  CommandHistory h = read_history(store, fp, launcher_count(get), patience, log_message, true);
  Feedback f;
  f.asked = !argv.empty();
  if (!h.last) return f;
  f.last = std::move(h.last);
  f.profile = std::move(h.profile);
  if (h.first) f.firsts.emplace(f.last->command_fp, std::move(*h.first));
  if (h.plan) f.plans.emplace(f.last->id, std::move(*h.plan));
  std::string err;
  parse_tune(tune, env_or(kTuneSkipVar, ""), &f.choice, &err, env_or(kTuneAddVar, ""));
  return f;
}

}  // namespace gpuenv::flow
