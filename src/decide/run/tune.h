// `gpuenv run --tune`: which of a verdict's DataLoader settings to apply,
// and the environment that hands them to the Python start-up hook
// (python/sitecustomize.py). docs/feedback.md describes both.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "decide/verdict.h"

namespace gpuenv {

/// The settings --tune knows, in the order it applies them.
const std::vector<std::string>& tune_names();

/// The settings --tune applies only when named: "precision" (bf16 autocast,
/// python/gpuenv_precision.py), which changes numerics.
const std::vector<std::string>& opt_in_tune_names();

/// What the user allows: --tune (all), --tune=-num_workers,-pin_memory
/// (all but those), --tune=+precision (all, and an opt-in one), and
/// GPUENV_TUNE_SKIP=num_workers,... / GPUENV_TUNE_ADD=precision refusing or
/// adding more.
struct TuneChoice {
  bool enabled = false;
  std::set<std::string> refused;
  std::set<std::string> added;  // opt-in settings asked for
  bool wants(const std::string& opt_in) const { return enabled && added.count(opt_in) && !refused.count(opt_in); }
};

/// Parses the --tune value ("", "true" (a bare --tune) or "all": everything; else a comma list of
/// -NAME and +NAME), GPUENV_TUNE_SKIP (a comma list of NAME) and GPUENV_TUNE_ADD (a comma list of
/// opt-in NAME). False with a message naming the unknown word and the known names.
bool parse_tune(const std::optional<std::string>& flag, const std::string& skip_env, TuneChoice* out,
                std::string* err, const std::string& add_env = "");

struct TuneChange {
  std::string name, value;
  bool refused = false;
};

/// The verdicts' tune settings (the first verdict naming one wins), each
/// marked refused or not, in tune_names() order.
std::vector<TuneChange> tune_changes(const std::vector<Verdict>& verdicts, const TuneChoice& choice);

/// GPUENV_TUNE_DATALOADER's value: "num_workers=15,pin_memory=True" of
/// the changes not refused; "" when none is left.
std::string tune_env_value(const std::vector<TuneChange>& changes);

/// `dir` first on PYTHONPATH, before what was there (nullptr: nothing).
std::string prepend_pythonpath(const std::string& dir, const char* old);

/// The environment variables --tune sets.
inline constexpr const char* kTuneVar = "GPUENV_TUNE_DATALOADER";
inline constexpr const char* kTuneSkipVar = "GPUENV_TUNE_SKIP";
inline constexpr const char* kTuneAddVar = "GPUENV_TUNE_ADD";
inline constexpr const char* kTunePrecisionVar = "GPUENV_TUNE_PRECISION";

}  // namespace gpuenv
