// gpuenv plan-memory (cli/cmd_plan_memory.cc): will this model train here.
#pragma once

#include "cli/context.h"

namespace gpuenv {

std::function<int()> setup_plan_memory(CLI::App* sub, Context* ctx);

}  // namespace gpuenv
