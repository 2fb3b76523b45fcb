// The subcommands: the table `gpuenv --help` lists (cli/commands.cc) and
// each command's setup, one declaration here for every cli/cmd_*.cc.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cli/context.h"

namespace gpuenv {

/// A subcommand: `setup` adds its flags to `sub` and returns the action to
/// run once the command line has been parsed (returns the exit code).
struct Command {
  const char* name;
  const char* help;
  std::function<int()> (*setup)(CLI::App* sub, Context* ctx);
  /// The command ends with a program to run (Context::command); its own
  /// flags come first. CLI11 never sees the program's arguments.
  bool takes_command = false;
};

/// Every subcommand, in the order `gpuenv --help` lists them.
const std::vector<Command>& commands();

/// Their names, in the same order.
std::vector<std::string> command_names();

// cli/cmd_core.cc: what was sensed, the environment, its reasons, a run.
std::function<int()> setup_detect(CLI::App* sub, Context* ctx);
std::function<int()> setup_env(CLI::App* sub, Context* ctx);
std::function<int()> setup_explain(CLI::App* sub, Context* ctx);
std::function<int()> setup_run(CLI::App* sub, Context* ctx);
/// cli/cmd_init.cc: `gpuenv init [--log-format text|json] [--] [CMD...]`,
/// the container's entrypoint.
std::function<int()> setup_init(CLI::App* sub, Context* ctx);
/// cli/cmd_serve.cc: `gpuenv serve jupyter|ssh [FLAGS]`, the services init starts.
std::function<int()> setup_serve(CLI::App* sub, Context* ctx);
std::function<int()> setup_doctor(CLI::App* sub, Context* ctx);       // cli/cmd_doctor.cc
std::function<int()> setup_labels(CLI::App* sub, Context* ctx);       // cli/cmd_labels.cc
std::function<int()> setup_export(CLI::App* sub, Context* ctx);       // cli/cmd_export.cc
/// cli/cmd_inspect.cc: `gpuenv inspect FILE...`, the CUDA code each file
/// carries and whether each GPU of the Machine can run it (docs/inspect.md).
/// Exit status (model/exit_codes.h): 0 every GPU runs the code natively (or
/// there is no GPU), kExitInspectPtxJit (4) some GPU only by JIT-compiling
/// PTX, kExitFailure (1) some GPU cannot run it, kExitBadInput (3) a file is
/// unreadable or corrupt.
std::function<int()> setup_inspect(CLI::App* sub, Context* ctx);
std::function<int()> setup_bench(CLI::App* sub, Context* ctx);        // cli/cmd_bench.cc
std::function<int()> setup_plan_memory(CLI::App* sub, Context* ctx);  // cli/cmd_plan_memory.cc
std::function<int()> setup_check(CLI::App* sub, Context* ctx);        // cli/cmd_check.cc
std::function<int()> setup_report(CLI::App* sub, Context* ctx);       // cli/cmd_report.cc
// cli/cmd_help.cc: the command table itself, for a person, a shell, man(1).
std::function<int()> setup_help(CLI::App* sub, Context* ctx);
std::function<int()> setup_completion(CLI::App* sub, Context* ctx);
std::function<int()> setup_man(CLI::App* sub, Context* ctx);

}  // namespace gpuenv
