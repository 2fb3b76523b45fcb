// The container commands: `init` (cli/cmd_init.cc), the entrypoint, and
// `serve jupyter|ssh` (cli/cmd_serve.cc), the services it starts.
#pragma once

#include <functional>

#include "cli/context.h"

namespace gpuenv {

/// `gpuenv init [--log-format text|json] [--] [CMD...]`.
std::function<int()> setup_init(CLI::App* sub, Context* ctx);

/// `gpuenv serve jupyter|ssh [FLAGS]`.
std::function<int()> setup_serve(CLI::App* sub, Context* ctx);

}  // namespace gpuenv
