// Which machine a measurement belongs to: its GPUs (by UUID), the driver
// and the CUDA version the driver supports. A new driver or a swapped GPU
// is a new machine: old figures no longer describe it.
#pragma once

#include <string>

#include "model/machine.h"

namespace gpuenv::store {

/// "fp-" and 16 hex digits, stable across runs and gpuenv versions.
std::string fingerprint(const Machine& m);

/// One line for people: "1x NVIDIA H200, driver 580.95.05, CUDA 13.0".
std::string describe_machine(const Machine& m);

}  // namespace gpuenv::store
