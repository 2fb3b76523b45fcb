#include "cli/app.h"

#include <cstdio>
#include <sstream>

#include "act/printable.h"
#include "cli/context.h"
#include "cli/exit_codes.h"

namespace gpuenv {
namespace {

/// Where the program of a `takes_command` subcommand starts in argv: at the
/// first argument that is not one of the subcommand's own flags (or a flag's
/// value), or right after `--`. Returns {end of gpuenv's arguments, start of
/// the program's}.
std::pair<int, int> split_command(const CLI::App* sub, int argc, char** argv, int first) {
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") return {i, i + 1};
    if (a.size() < 2 || a[0] != '-') return {i, i};
    auto eq = a.find('=');
    const CLI::Option* o = sub->get_option_no_throw(a.substr(0, eq));
    if (o && eq == std::string::npos && o->get_items_expected_max() > 0) ++i;  // its value
  }
  return {argc, argc};
}

/// Where argv names a subcommand: its first argument that is not a flag
/// (gpuenv's own flags, --help and --version, take no value); -1 if none.
int subcommand_at(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (argv[i][0] != '-') return i;
  return -1;
}

/// The command argv names, or nullptr (none, or a name that is no command).
const Command* named_command(int argc, char** argv) {
  int at = subcommand_at(argc, argv);
  if (at < 0) return nullptr;
  for (const Command& c : commands())
    if (std::string(argv[at]) == c.name) return &c;
  return nullptr;
}

/// argv's first argument that is not a flag, when only gpuenv's own flags
/// come before it: there it can be nothing but a command's name.
const char* command_word(int argc, char** argv) {
  int at = subcommand_at(argc, argv);
  for (int i = 1; i < at; ++i) {
    std::string a = argv[i];
    if (a != "-h" && a != "--help" && a != "--version") return nullptr;
  }
  return at < 0 ? nullptr : argv[at];
}

}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App app{"gpuenv: sense the GPU machine, decide the environment PyTorch should run with, act on it.",
               "gpuenv"};
  app.set_version_flag("--version", std::string("gpuenv ") + GPUENV_VERSION);
  app.require_subcommand(1);
  Context ctx;
  // CLI11 parses only the subcommand argv names, so only its options are
  // built when it names one: from here to the action took 0.4 ms with all of
  // them built, 0.06 ms with one. The others are still added, with their
  // help line, for `gpuenv --help`.
  const Command* named = named_command(argc, argv);
  if (const char* word = command_word(argc, argv); word && !named) {
    std::string names;
    for (const Command& c : commands()) names += std::string(names.empty() ? "" : ", ") + c.name;
    print_error(std::string("unknown command \"") + word + "\"; the commands are " + names +
                " (gpuenv --help says what each does)");
    return kExitUsage;
  }
  std::vector<std::pair<CLI::App*, std::function<int()>>> actions;
  for (const Command& c : commands()) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    if (named && named != &c) continue;
    actions.emplace_back(sub, c.setup(sub, &ctx));
  }
  if (named && named->takes_command) {
    auto [end, start] = split_command(actions[0].first, argc, argv, subcommand_at(argc, argv) + 1);
    ctx.command.assign(argv + start, argv + argc);
    argc = end;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::ostringstream out, err;  // CLI11 quotes the arguments: sanitise them
    app.exit(e, out, err);
    std::fputs(printable_lines(out.str() + err.str()).c_str(), stderr);
    return kExitUsage;
  }
  for (auto& [sub, action] : actions)
    if (*sub) return action();
  return kExitUsage;
}

}  // namespace gpuenv
