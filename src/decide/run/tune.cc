#include "decide/run/tune.h"

#include <algorithm>

#include "decide/run/tune_search.h"
#include "sys/text.h"

namespace gpuenv {
namespace {

bool in(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool known(const std::string& name) { return in(tune_names(), name) || in(opt_in_tune_names(), name); }

std::string unknown(const std::string& where, const std::string& word) {
  return where + ": unknown setting \"" + word + "\"; the settings are " + join(tune_names(), ", ") +
         ", and only when named (+NAME): " + join(opt_in_tune_names(), ", ");
}

}  // namespace

const std::vector<std::string>& tune_names() { return tune_setting_names(); }

const std::vector<std::string>& opt_in_tune_names() {
  static const std::vector<std::string> kNames = {"precision"};
  return kNames;
}

bool parse_tune(const std::optional<std::string>& flag, const std::string& skip_env, TuneChoice* out,
                std::string* err, const std::string& add_env) {
  TuneChoice c;
  c.enabled = flag.has_value();
  if (flag && *flag != "all" && *flag != "true" && !flag->empty())  // a bare --tune reads as "true"
    for (const auto& w : split_commas(*flag)) {
      if ((w[0] != '-' && w[0] != '+') || !known(w.substr(1)))
        return *err = unknown("--tune", w) + " (refuse one with --tune=-NAME, add one with --tune=+NAME)", false;
      std::string name = w.substr(1);
      if ((w[0] == '-' ? c.added : c.refused).count(name))
        return *err = "--tune: both +" + name + " and -" + name + "; name it once", false;
      (w[0] == '-' ? c.refused : c.added).insert(name);
    }
  for (const auto& w : split_commas(add_env)) {
    if (!in(opt_in_tune_names(), w))
      return *err = std::string(kTuneAddVar) + ": \"" + w + "\" is not an opt-in setting; they are " +
                    join(opt_in_tune_names(), ", "), false;
    c.added.insert(w);
  }
  for (const auto& w : split_commas(skip_env)) {
    if (!known(w)) return *err = unknown(kTuneSkipVar, w), false;
    c.refused.insert(w);
  }
  *out = std::move(c);
  return true;
}

std::vector<TuneChange> tune_changes(const std::vector<Verdict>& verdicts, const TuneChoice& choice) {
  std::vector<TuneChange> out;
  for (const auto& name : tune_names())
    for (const auto& v : verdicts)
      if (auto it = v.tune.find(name); it != v.tune.end()) {
        out.push_back({name, it->second, choice.refused.count(name) > 0});
        break;
      }
  return out;
}

std::string tune_env_value(const std::vector<TuneChange>& changes) {
  std::vector<std::string> parts;
  for (const auto& c : changes)
    if (!c.refused) parts.push_back(c.name + "=" + c.value);
  return join(parts, ",");
}

std::string prepend_pythonpath(const std::string& dir, const char* old) {
  if (!old || !*old) return dir;
  if ((":" + std::string(old) + ":").find(":" + dir + ":") != std::string::npos) return old;  // the plan put it there
  return dir + ":" + old;
}

}  // namespace gpuenv
