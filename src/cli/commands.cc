#include "cli/context.h"

namespace gpuenv {

const std::vector<Command>& commands() {
  static const std::vector<Command> kCommands = {
      {"detect", "Show what was sensed: GPUs, driver, host", setup_detect},
      {"env", "Print the environment to use (eval \"$(gpuenv env)\")", setup_env},
      {"explain", "Show each setting with the reason for it", setup_explain},
      {"run", "Run a command under the environment: gpuenv run [--] CMD ...", setup_run},
  };
  return kCommands;
}

}  // namespace gpuenv
