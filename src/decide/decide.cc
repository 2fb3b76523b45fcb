#include "decide/decide.h"

#include "decide/rules.h"

namespace gpuenv {
namespace {

void merge(Decision d, Plan* plan) {
  for (auto& s : d.settings) {
    bool replaced = false;
    for (auto& existing : plan->settings)
      if (existing.name == s.name) {
        existing = s;
        replaced = true;
      }
    if (!replaced) plan->settings.push_back(std::move(s));
  }
  for (auto& n : d.notes) plan->notes.push_back(std::move(n));
  if (d.binding) plan->binding = std::move(d.binding);
}

// Whose value the environment held, as far as gpuenv knows: the snapshot's
// record, or the environment gpuenv was started in.
bool recorded(const Options& o, const std::string& name) { return o.from_snapshot.count(name) > 0; }

void honour_user(const Options& o, Setting* s) {
  const std::string* user = o.getenv(s->name);
  if (!user || *user == s->value) return;
  if (s->launcher_default == *user) {
    s->reason += " (replaces " + s->name + "=" + *user + ", " + s->launcher_default_is + ")";
    return;
  }
  s->user_value = *user;
  bool snapshot = recorded(o, s->name);
  if (o.override_user) {
    s->origin = Origin::kOverridden;
    s->reason += std::string(" (replaces ") + (snapshot ? "the snapshot's " : "your ") + s->name +
                 "=" + *user + ", as --override asks)";
  } else {
    s->origin = Origin::kKept;
    std::string would = s->value.empty() ? "set it empty" : "set " + s->value;
    s->reason = std::string("kept ") + (snapshot ? "the snapshot's" : "yours") + "; gpuenv would " +
                would + ": " + s->reason;
    s->value = *user;
  }
}

}  // namespace

Plan decide(const Machine& m, const Options& options) {
  Plan plan;
  for (const Rule& r : all_rules()) {
    Decision d = r.fn(m, options);
    for (auto& s : d.settings)
      if (s.rule.empty()) s.rule = r.name;
    for (auto& n : d.notes)
      if (n.rule.empty()) n.rule = r.name;
    merge(std::move(d), &plan);
  }
  for (auto& s : plan.settings) honour_user(options, &s);
  return plan;
}

}  // namespace gpuenv
