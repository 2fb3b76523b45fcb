// Which machine a measurement belongs to: its GPUs (by UUID), the driver
// and the CUDA version the driver supports. A new driver or a swapped GPU
// is a new machine: old figures no longer describe it.
#pragma once

#include <string>
#include <vector>

#include "model/machine.h"

namespace gpuenv::store {

/// "fp-" and 16 hex digits, stable across runs and gpuenv versions.
std::string fingerprint(const Machine& m);

/// "fp-" and 16 hex digits of any text (a command line, a file's content).
std::string text_fingerprint(const std::string& text);

/// A watched job's command: its arguments and the directory it ran in, so
/// that `python train.py` in two projects are two commands.
std::string command_fingerprint(const std::vector<std::string>& argv, const std::string& cwd);

/// One line for people: "1x NVIDIA H200, driver 580.95.05, CUDA 13.0".
std::string describe_machine(const Machine& m);

}  // namespace gpuenv::store
