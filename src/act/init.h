// `gpuenv init`: write the plan where later shells, `docker exec` and SSH
// sessions find it, then run the command (act/supervise.h).
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
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

/// Writes the env file and the profile script (0644), reporting each file
/// written, each setting left out and each failure (a warning: init goes on
/// without the file) through `log`.
void write_plan_files(const Plan& plan, const PlanFiles& files,
                      const std::function<void(const LogEvent&)>& log);

/// What to run when init is given no command: $SHELL, else /bin/bash, else
/// /bin/sh (as NGC's entrypoint does: `docker run -it IMAGE` gives a shell).
std::vector<std::string> default_command();

}  // namespace gpuenv
