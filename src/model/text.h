// Small phrases that name a model fact, one home each so they cannot
// drift. The text helpers without gpuenv types (join, split_commas,
// ascii_lower, utc_time, utc_now) live in sys/text.h, which this brings in.
#pragma once

#include <string>

#include "model/machine.h"
#include "sys/text.h"

namespace gpuenv {

/// "GPU 0 (NVIDIA H200)", or "GPU 0" when the name was not sensed.
std::string gpu_label(const Gpu& g);

}  // namespace gpuenv
