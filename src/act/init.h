// `gpuenv init`'s files: the plan where later shells, `docker exec` and SSH
// sessions find it. The entrypoint's sequence is flow/init.h's; the command
// runs under act/supervise.h.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "act/init_log.h"
#include "model/plan.h"
#include "sys/file_write.h"

namespace gpuenv {

/// Where init writes the plan. Defaults: /etc/gpuenv/env and
/// /etc/profile.d/gpuenv.sh (overridden by GPUENV_ETC_DIR, GPUENV_PROFILE_D).
struct PlanFiles {
  std::string etc_dir = "/etc/gpuenv";
  std::string profile_d = "/etc/profile.d";
  std::string env_file() const { return etc_dir + "/env"; }
  std::string profile_script() const { return profile_d + "/gpuenv.sh"; }
};

/// The dotenv file, for dotenv readers (`docker run --env-file`, compose,
/// systemd's EnvironmentFile, python-dotenv), never for a shell: NAME=value
/// lines. A value dotenv cannot carry (a newline, CR, NUL, or bytes that are
/// not UTF-8) is left out and its name appended to *skipped.
std::string render_env_file(const Plan& plan, std::vector<std::string>* skipped);

/// The profile script: `export NAME='value'` lines, safe whatever the values.
/// False (with *err) only for a value no environment can hold (NUL).
bool render_profile_script(const Plan& plan, std::string* out, std::string* err);

/// The careful atomic write (sys/file_write.h), under its old name here.
using sys::write_file_atomic;

/// Writes the env file and the profile script (0644) with `write`,
/// reporting each file written, each setting left out and each failure (a
/// warning: init goes on without the file) through `log`.
void write_plan_files(const Plan& plan, const PlanFiles& files, const std::function<void(const LogEvent&)>& log,
                      const sys::WriteFile& write = write_file_atomic);

/// The user's pip on the cache root (docs/container.md, "pip install"):
/// `pip install` by the user lands in <cache_root>/pip and outlives the
/// container. PYTHONUSERBASE names it (Python keeps lib/pythonX.Y/site-packages
/// apart per version, so another Python never loads these wheels);
/// PIP_BREAK_SYSTEM_PACKAGES=1 lets pip write that user base where the base
/// image's Python is externally managed (PEP 668: the system's packages stay
/// root's, unwritable by the user); its bin goes on PATH, first for a command
/// that runs as the user, last when the process stays root (`serve ssh`), so
/// that root never runs a program the user put there instead of a system one.
struct PythonUserBase {
  std::string dir;                                         // "" when init sets nothing
  std::vector<std::pair<std::string, std::string>> env;   // what to set
};

/// Nothing when the cache root is "" (refused, or none) or PYTHONUSERBASE is
/// set already (the user's choice; PATH is then left alone too). A
/// PIP_BREAK_SYSTEM_PACKAGES that is set is kept. `get` reads the environment.
PythonUserBase python_user_base(const std::string& cache_root, bool bin_first,
                                const std::function<const char*(const char*)>& get);

/// What to run when init is given no command: $SHELL, else /bin/bash, else
/// /bin/sh (as NGC's entrypoint does: `docker run -it IMAGE` gives a shell).
std::vector<std::string> default_command();

}  // namespace gpuenv
