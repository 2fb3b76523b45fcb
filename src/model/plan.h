// Plan: what decide concludes for a Machine. A list of settings, each with
// its reason, plus notes (warnings) and the CPU binding for `run`.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/launch.h"

namespace gpuenv {

enum class Origin {
  kDecided,     // gpuenv chose the value
  kKept,        // the user had set it; gpuenv kept theirs
  kOverridden,  // the user had set it; --override replaced it
};

struct Setting {
  std::string name;    // environment variable
  std::string value;
  std::string reason;  // one line, shown by explain
  std::string rule;    // the rule that decided it, e.g. "tf32"
  Origin origin = Origin::kDecided;
  std::optional<std::string> user_value;  // what the user had, for kKept/kOverridden
  // A value a launcher gives the environment when it is unset, so that
  // gpuenv cannot tell it from the user's (torchrun's OMP_NUM_THREADS=1):
  // replaced like an unset variable. README: the one exception to "yours
  // are kept".
  std::optional<std::string> launcher_default;
  // What launcher_default is, for the reason: "the value torchrun gives
  // every worker when it is unset". Facts only, never a guess at its origin.
  std::string launcher_default_is;
  // A ':'-separated search path (PYTHONPATH): gpuenv's entry goes first and
  // the user's entries follow, so nothing of theirs is dropped.
  bool search_path = false;
  friend bool operator==(const Setting&, const Setting&) = default;
};

enum class Severity { kInfo, kWarning, kError };

struct Note {
  Severity severity = Severity::kInfo;
  std::string rule;
  std::string message;
  friend bool operator==(const Note&, const Note&) = default;
};

/// CPUs a process should be pinned to (run applies it with sched_setaffinity).
struct CpuBinding {
  std::vector<int> cpus;
  std::string reason;
  friend bool operator==(const CpuBinding&, const CpuBinding&) = default;
};

/// What one rule contributes. Rules are merged in order; a later rule's
/// setting of the same name replaces an earlier one.
struct Decision {
  std::vector<Setting> settings;
  std::vector<Note> notes;
  std::optional<CpuBinding> binding;
};

struct Plan {
  std::vector<Setting> settings;
  std::vector<Note> notes;
  std::optional<CpuBinding> binding;
  LaunchEnv launch;  // the engine(s) that started this process, as the rules read them
  const Setting* find(const std::string& name) const {
    for (const auto& s : settings)
      if (s.name == name) return &s;
    return nullptr;
  }
};

/// A decided setting: what a rule returns most of the time.
inline Setting make_setting(std::string name, std::string value, std::string reason) {
  Setting s;
  s.name = std::move(name);
  s.value = std::move(value);
  s.reason = std::move(reason);
  return s;
}

/// Choices the user makes on the command line. Pure data.
struct Options {
  bool ptx = false;       // append +PTX to TORCH_CUDA_ARCH_LIST
  bool override_user = false;  // --override: replace variables the user set
  // Persistent cache root (--cache-root, GPUENV_CACHE_ROOT, else
  // $XDG_CACHE_HOME/gpuenv, else $HOME/.cache/gpuenv): resolved by the CLI
  // (store/cache_root.h), not by rules. "" when none, or when refused.
  std::string cache_root;
  // Why the resolved cache root was refused (another user could plant links
  // in it: store/private_dir.h); rule_caches says so in a warning note.
  std::string cache_root_refused;
  // The directory of gpuenv's Python start-up hook (python/sitecustomize.py,
  // installed beside the binary): found by the CLI (sense/python/python_hook.h);
  // "" when this gpuenv has none, or when it was refused:
  std::string python_hook_dir;
  // why the hook was left off PYTHONPATH (another user could change it:
  // sense/python/python_hook.h); rule_tf32 says so in a warning note.
  std::string python_hook_refused;
  // The environment that applies: the snapshot's recorded variables with the
  // live process's on top. Rules read user settings and, through
  // decide/launcher_env.h, what torchrun, Kubeflow, JobSet or Slurm set, from here.
  std::map<std::string, std::string> env;
  // The names in env whose value is the --machine snapshot's record, not
  // this process's environment; the plan says whose value it kept.
  std::set<std::string> from_snapshot;
  const std::string* getenv(const std::string& name) const {
    auto it = env.find(name);
    return it == env.end() ? nullptr : &it->second;
  }
};

}  // namespace gpuenv
