// What `gpuenv ... --help` lists, read back from its text: the flags and
// subcommands a test holds README, the completion scripts and the man page to.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace gpuenv::testing {

/// The lines of `text`, without their newlines.
std::vector<std::string> lines_of(const std::string& text);

/// The long flags `gpuenv ARGS --help` lists (its OPTIONS lines): "--json".
std::set<std::string> help_flags(const std::vector<std::string>& args);

/// The subcommands `gpuenv COMMAND --help` lists (serve's jupyter and ssh).
std::vector<std::string> help_subcommands(const std::string& command);

/// Each command and subcommand as argv: {"detect"}, ..., {"serve", "jupyter"}.
std::vector<std::vector<std::string>> command_forms();

}  // namespace gpuenv::testing
