// The command line: a table of subcommands over sense -> decide -> act.
#pragma once

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "cli/context.h"

namespace gpuenv {

struct Command;

/// The parser: gpuenv's own flags and every command with its help line.
/// The flags of `only` are built (every command's when it is nullptr: for
/// help, completion and the man page), each with the action it runs.
struct CommandLine {
  std::unique_ptr<CLI::App> app;
  std::vector<std::pair<CLI::App*, std::function<int()>>> actions;
};
CommandLine build_command_line(Context* ctx, const Command* only);

/// Parses argv, runs the subcommand, returns the process exit code
/// (model/exit_codes.h). Prints to stdout/stderr; throws only what no code
/// can answer (std::bad_alloc), which main reports.
int run_cli(int argc, char** argv);

}  // namespace gpuenv
