#include "decide/decide.h"

#include "decide/launcher_env.h"
#include "decide/rules/rules.h"

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

// A search path keeps the user's entries after gpuenv's.
void extend_search_path(const std::string& user, Setting* s) {
  std::string entries = ":" + user + ":";
  if (entries.find(":" + s->value + ":") != std::string::npos) {
    s->value = user;
    s->reason += " (already on your " + s->name + ")";
    return;
  }
  s->value += ":" + user;
  s->reason += " (before your " + s->name + "=" + user + ")";
}

// CUDA_VISIBLE_DEVICES as Slurm bound it: kept even with --override, since
// the GPUs outside it belong to other tasks or jobs.
bool launcher_binding(const LaunchEnv& l, Setting* s) {
  if (s->name != "CUDA_VISIBLE_DEVICES" || !l.bound_gpus) return false;
  s->user_value = *l.bound_gpus;
  s->origin = Origin::kKept;
  s->reason = "kept Slurm's GPU binding (" + l.bound_by + "), which gpuenv never replaces; gpuenv would set " +
              s->value + ": " + s->reason;
  s->value = *l.bound_gpus;
  return true;
}

// The value the container image's base gave the variable, when the
// environment still holds exactly that: the image's choice, not the user's.
bool base_image_value(const Machine& m, const std::string& name, const std::string& value) {
  auto it = m.base_image_env.find(name);
  return it != m.base_image_env.end() && it->second == value;
}

void honour_user(const Machine& m, const Options& o, const LaunchEnv& l, Setting* s) {
  const std::string* user = o.getenv(s->name);
  if (!user || *user == s->value) return;
  if (launcher_binding(l, s)) return;
  if (s->search_path && !user->empty()) return extend_search_path(*user, s);
  if (s->launcher_default == *user) {
    s->reason += " (replaces " + s->name + "=" + *user + ", " + s->launcher_default_is + ")";
    return;
  }
  if (base_image_value(m, s->name, *user)) {
    s->reason += " (replaces " + s->name + "=" + *user +
                 ", the container image's base value, recorded when gpuenv's image was built; "
                 "set another value to keep your own)";
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
  plan.launch = launch_env(options);
  for (auto& s : plan.settings) honour_user(m, options, plan.launch, &s);
  return plan;
}

}  // namespace gpuenv
