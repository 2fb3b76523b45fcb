#include "cli/app.h"

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

int find_subcommand(int argc, char** argv, const char* name) {
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] != '-') return std::string(argv[i]) == name ? i : -1;
  }
  return -1;
}

}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App app{"gpuenv: sense the GPU machine, decide the environment PyTorch should run with, act on it.",
               "gpuenv"};
  app.set_version_flag("--version", std::string("gpuenv ") + GPUENV_VERSION);
  app.require_subcommand(1);
  Context ctx;
  std::vector<std::pair<CLI::App*, std::function<int()>>> actions;
  for (const Command& c : commands()) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    actions.emplace_back(sub, c.setup(sub, &ctx));
  }
  for (size_t k = 0; k < commands().size(); ++k) {
    const Command& c = commands()[k];
    int at = c.takes_command ? find_subcommand(argc, argv, c.name) : -1;
    if (at < 0) continue;
    auto [end, start] = split_command(actions[k].first, argc, argv, at + 1);
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
    app.exit(e);
    return kExitUsage;
  }
  for (auto& [sub, action] : actions)
    if (*sub) return action();
  return kExitUsage;
}

}  // namespace gpuenv
