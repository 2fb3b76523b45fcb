// What the command table becomes outside the binary: the bash, zsh and fish
// completion scripts (`gpuenv completion SHELL`) and the manual page
// (`gpuenv man`). The CLI describes its commands as plain data
// (cli/describe.h) and these write it out, so the scripts and the page can
// name nothing the binary does not take.
#pragma once

#include <string>
#include <vector>

namespace gpuenv {

/// One flag: its names ("--json", or "-h" and "--help"), and the name of its
/// value ("FILE"; empty for a flag that takes none).
struct FlagDoc {
  std::vector<std::string> names;
  std::string value;
  std::string help;
};

/// One command (or a command's own subcommand, as serve's jupyter).
struct CommandDoc {
  std::string name;
  std::string help;
  std::vector<FlagDoc> flags;
  std::vector<CommandDoc> subcommands;
  /// Words its first argument may be (completion's bash|zsh|fish, help's
  /// command names); empty when it takes none or any.
  std::vector<std::string> words;
  /// It ends with a program to run (run, explain, init): after `--` the
  /// shell completes files and commands.
  bool takes_command = false;
};

/// The whole command line: the program's own flags and its commands.
struct ProgramDoc {
  std::string name;     // "gpuenv"
  std::string summary;  // the one line under NAME
  std::string version;  // "gpuenv 0.9.0"
  std::vector<FlagDoc> flags;
  std::vector<CommandDoc> commands;
};

/// The shells `gpuenv completion` writes for, in the order it names them.
const std::vector<std::string>& completion_shells();

/// The completion script for `shell` (one of completion_shells()); "" for
/// another. bash: `source <(gpuenv completion bash)`; zsh: the same, or the
/// file `_gpuenv` on $fpath; fish: into ~/.config/fish/completions/gpuenv.fish.
std::string completion_script(const std::string& shell, const ProgramDoc& program);

/// The manual page, in roff (man(7)): `gpuenv man | man -l -`.
std::string man_page(const ProgramDoc& program);

}  // namespace gpuenv
