// gpuenv's exit codes (documented in README.md, "Exit codes").
#pragma once

namespace gpuenv {

enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,     // the command could not do what was asked (message says why)
  kExitUsage = 2,       // bad command line
  kExitBadInput = 3,    // a file given (--machine) is missing or not a valid snapshot
  kExitWarnings = 4,    // doctor: warnings, no error (inspect: PTX JIT only)
  kExitDriverFails = 5,  // detect: NVIDIA software is installed but fails (decide/health.h driver_fails)
  // `run` only: 126 the command is not executable, 127 not found; otherwise
  // the command's own exit status.
};

}  // namespace gpuenv
