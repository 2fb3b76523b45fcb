// gpuenv's exit codes, every one, in one place (README.md, "Exit codes",
// says which command uses which). A leaf of constants: act/ includes it for
// the codes of the programs it starts (run, init, serve).
#pragma once

#include "sys/subprocess.h"  // the shell's 126 and 127, whose one home is sys/

namespace gpuenv {

enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,      // the command could not do what was asked (message says why)
  kExitUsage = 2,        // bad command line (a flag the command does not take, a bad value)
  kExitBadInput = 3,     // a file given (--machine, inspect's FILE) is missing or not valid
  kExitWarnings = 4,     // doctor: warnings, no error
  kExitInspectPtxJit = 4,  // inspect: every GPU runs the code, some only by JIT-compiling PTX
  kExitDriverFails = 5,  // detect: NVIDIA software is installed but fails (decide/health.h driver_fails)
  kExitServeConfig = 78,  // init, serve: the service cannot be set up (sysexits' EX_CONFIG)
  kExitCannotExecute = sys::kExitCannotExecute,      // 126, run, init, serve: the command is there but cannot be run
  kExitCommandNotFound = sys::kExitCommandNotFound,  // 127, run, init, serve: no such command
  kExitSignalBase = 128,  // init: 128+N when signal N ended the command (as a shell says)
};

/// doctor --exit-codes nagios: the Nagios plugin codes, which Node Problem
/// Detector's custom plugins use too.
enum NagiosCode : int {
  kNagiosOk = 0,
  kNagiosWarning = 1,
  kNagiosCritical = 2,
  kNagiosUnknown = 3,  // doctor could not judge (a bad --machine file, an internal failure)
};

}  // namespace gpuenv
