// `gpuenv inspect FILE...`: the CUDA code each file carries (cubins per
// architecture, PTX and its ISA version, compressed entries) and whether
// each GPU of the Machine can run it. docs/inspect.md.
#pragma once

#include <functional>

#include "cli/context.h"

namespace gpuenv {

/// inspect's exit status when no GPU is denied but some GPU can run the
/// code only by JIT-compiling PTX (README.md, "Exit codes"). The others:
/// 0 every GPU runs it natively (or there is no GPU), kExitFailure (1) some
/// GPU cannot run it, kExitBadInput (3) a file is unreadable or corrupt.
inline constexpr int kExitInspectPtxJit = 4;

/// Adds inspect's arguments and flags to `sub`; the action prints the
/// report and returns the exit status above.
std::function<int()> setup_inspect(CLI::App* sub, Context* ctx);

}  // namespace gpuenv
