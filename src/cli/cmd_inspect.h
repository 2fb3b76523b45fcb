// `gpuenv inspect FILE...`: the CUDA code each file carries (cubins per
// architecture, PTX and its ISA version, compressed entries) and whether
// each GPU of the Machine can run it. docs/inspect.md.
#pragma once

#include <functional>

#include "cli/context.h"

namespace gpuenv {

/// Adds inspect's arguments and flags to `sub`; the action prints the
/// report and returns its exit status (model/exit_codes.h): 0 every GPU runs
/// the code natively (or there is no GPU), kExitInspectPtxJit (4) some GPU
/// only by JIT-compiling PTX, kExitFailure (1) some GPU cannot run it,
/// kExitBadInput (3) a file is unreadable or corrupt.
std::function<int()> setup_inspect(CLI::App* sub, Context* ctx);

}  // namespace gpuenv
