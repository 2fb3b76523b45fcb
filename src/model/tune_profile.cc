#include "model/tune_profile.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "model/job.h"
#include "sys/text.h"
#include "model/json_opt.h"
#include "model/json_strict.h"

namespace gpuenv {
namespace {

using nlohmann::json;

bool known_setting(const std::string& name) {
  const auto& names = tune_setting_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Outside text in a message: at most 40 bytes, cut between characters.
std::string shown(const std::string& s) { return s.size() > 40 ? std::string(utf8_prefix(s, 40)) + "..." : s; }

// "" when `value` is one gpuenv writes for `name`.
std::string value_problem(const std::string& name, const std::string& value, int max_workers) {
  if (name != "num_workers")
    return value == "True" || value == "False" ? "" : name + "=" + shown(value) + " is not True or False";
  int n = -1;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec == std::errc() && end == value.data() + value.size() && n >= 0 && n <= max_workers) return "";
  return "num_workers=" + shown(value) + " is out of range (0 to " + std::to_string(max_workers) + ")";
}

bool text(const json& j, const char* key, const std::string& path, std::string* out, std::string* err) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return true;
  if (!it->is_string()) return json_fail(path + "." + key, "expected a string", err);
  *out = it->get<std::string>();
  return true;
}

// A settings text at j[key] that tune_settings_problem() accepts.
bool settings(const json& j, const char* key, const std::string& path, std::string* out, std::string* err,
              int max_workers = kMaxTuneWorkers) {
  if (!text(j, key, path, out, err)) return false;
  if (std::string why = tune_settings_problem(*out, max_workers); !why.empty()) return json_fail(path + "." + key, why, err);
  return true;
}

// A number in [0, max] at j[key]; absent or null leaves *out unset.
bool seconds(const json& j, const char* key, const std::string& path, std::optional<double>* out, double max,
             std::string* err) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return true;
  if (!it->is_number()) return json_fail(path + "." + key, "expected a number", err);
  double v = it->get<double>();
  if (!std::isfinite(v) || v < 0 || v > max) return json_fail(path + "." + key, "out of range", err);
  *out = v;
  return true;
}

json run_json(const TuneRun& r) {
  return {{"job_id", r.job_id},        {"at", r.at},         {"settings", r.settings},
          {"steps_per_s", opt(r.steps_per_s)}, {"wall_s", r.wall_s}, {"overhead_s", opt(r.overhead_s)},
          {"yours", r.yours}};
}

bool run_from(const json& j, const std::string& path, TuneRun* r, std::string* err) {
  if (!j.is_object()) return json_fail(path, "expected an object", err);
  std::optional<double> id, wall;
  if (!seconds(j, "job_id", path, &id, 9e15, err) || !text(j, "at", path, &r->at, err) ||
      !settings(j, "settings", path, &r->settings, err) || !seconds(j, "steps_per_s", path, &r->steps_per_s, 1e9, err) ||
      !seconds(j, "wall_s", path, &wall, kMaxJobSeconds, err) ||
      !seconds(j, "overhead_s", path, &r->overhead_s, kMaxJobSeconds, err) ||
      !settings(j, "yours", path, &r->yours, err, kMaxScriptWorkers))  // absent before issue 40
    return false;
  r->job_id = std::int64_t(id.value_or(0));
  r->wall_s = wall.value_or(0);
  return true;
}

}  // namespace

const std::vector<std::string>& tune_setting_names() {
  static const std::vector<std::string> kNames = {"num_workers", "pin_memory", "persistent_workers"};
  return kNames;
}

std::string tune_settings_problem(const std::string& settings, int max_workers) {
  if (settings.empty()) return "";
  std::size_t from = 0;
  for (;;) {
    std::size_t comma = std::min(settings.find(',', from), settings.size());
    std::string item = settings.substr(from, comma - from);
    std::size_t eq = item.find('=');
    std::string name = item.substr(0, std::min(eq, item.size()));
    if (eq == std::string::npos || !known_setting(name)) return "\"" + shown(item) + "\" is not a setting --tune writes";
    if (std::string why = value_problem(name, item.substr(eq + 1), max_workers); !why.empty()) return why;
    if (comma == settings.size()) return "";
    from = comma + 1;
  }
}

json profile_to_json(const TuneProfile& p) {
  json runs = json::array();
  for (const auto& r : p.runs) runs.push_back(run_json(r));
  return {{"command_fp", p.command_fp}, {"runs", runs},       {"next", p.next},      {"kept", p.kept},
          {"dropped", p.dropped},       {"settled", p.settled}, {"note", p.note}};
}

bool profile_from_json(const json& j, TuneProfile* p, std::string* err) {
  if (!j.is_object()) return json_fail("profile", "expected an object", err);
  if (!text(j, "command_fp", "profile", &p->command_fp, err) || !settings(j, "next", "profile", &p->next, err) ||
      !settings(j, "kept", "profile", &p->kept, err) || !text(j, "note", "profile", &p->note, err))
    return false;
  if (auto it = j.find("settled"); it != j.end() && !it->is_null()) {
    if (!it->is_boolean()) return json_fail("profile.settled", "expected true or false", err);
    p->settled = it->get<bool>();
  }
  if (auto it = j.find("dropped"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) return json_fail("profile.dropped", "expected an array", err);
    for (const auto& d : *it) {
      if (!d.is_string()) return json_fail("profile.dropped", "holds a non-string", err);
      if (!known_setting(d.get<std::string>())) return json_fail("profile.dropped", "holds an unknown setting", err);
      p->dropped.push_back(d.get<std::string>());
    }
  }
  auto it = j.find("runs");
  if (it == j.end() || !it->is_array()) return json_fail("profile.runs", "expected an array", err);
  if (it->size() > kMaxProfileRuns)
    return json_fail("profile.runs", "more than " + std::to_string(kMaxProfileRuns) + " runs", err);
  p->runs.resize(it->size());
  for (std::size_t i = 0; i < it->size(); ++i)
    if (!run_from((*it)[i], "profile.runs[" + std::to_string(i) + "]", &p->runs[i], err)) return false;
  return true;
}

}  // namespace gpuenv
