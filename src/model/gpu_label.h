// How a GPU is named in messages, one home so the phrase cannot drift
// (cc_string, the capability's, is in model/machine.h).
#pragma once

#include <string>

#include "model/machine.h"

namespace gpuenv {

/// "GPU 0 (NVIDIA H200)", or "GPU 0" when the name was not sensed.
std::string gpu_label(const Gpu& g);

}  // namespace gpuenv
