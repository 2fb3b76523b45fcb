// `gpuenv run`'s acts on this process: apply a plan to it and exec the command.
#pragma once

#include <string>
#include <vector>

#include "model/exit_codes.h"
#include "model/plan.h"

namespace gpuenv {

// kExitCannotExecute (126) and kExitCommandNotFound (127), as POSIX shells
// use them, are in model/exit_codes.h with every other code.

/// execvp()s argv with this process's environment (the plan's settings
/// applied by the caller: apply_settings, apply_binding). Returns only when
/// the command could not be started: exec_failure's 127 or 126, with *err.
/// Once exec succeeds the command's exit code, signals and stdin are its own.
int exec_command(const std::vector<std::string>& argv, std::string* err);

/// Why execvp(cmd) failed with errno `e`, in *err, and the status a shell
/// would give: 127 when no such command is there ("... (not found on
/// PATH)"); 126 when it is there but cannot run, including ENOENT for a
/// file that exists: a script whose #! interpreter is missing is named so.
int exec_failure(const std::string& cmd, int e, std::string* err);

/// Applies the settings to this process's environment (setenv).
void apply_settings(const Plan& plan);

/// Pins this process to the plan's CPU binding, if it has one; a failure
/// is reported in *warning (the command then runs unbound).
void apply_binding(const Plan& plan, std::string* warning);

}  // namespace gpuenv
