// The command line: a table of subcommands over sense -> decide -> act.
#pragma once

namespace gpuenv {

/// Parses argv, runs the subcommand, returns the process exit code
/// (model/exit_codes.h). Prints to stdout/stderr; throws only what no code
/// can answer (std::bad_alloc), which main reports.
int run_cli(int argc, char** argv);

}  // namespace gpuenv
