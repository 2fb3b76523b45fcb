#include "cli/app.h"

#include "cli/context.h"
#include "cli/exit_codes.h"

namespace gpuenv {

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
