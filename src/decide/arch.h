// Naming devices by their architecture, over the hardware table in
// model/hardware/arch_table.h (which this header brings in for its users).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "decide/visible.h"
#include "model/hardware/arch_table.h"
#include "model/machine.h"

namespace gpuenv {

/// One phrase naming the visible devices, grouped by model:
/// "8x NVIDIA A100-SXM4-80GB (Ampere, 8.0)" or "NVIDIA GeForce RTX 3090
/// (Ampere, 8.6), NVIDIA GeForce RTX 4090 (Ada Lovelace, 8.9)".
std::string describe_devices(const std::vector<VisibleDevice>& devices);

/// The distinct compute capabilities of `devices`, ascending. nullopt when
/// any device's capability was not sensed.
std::optional<std::vector<ComputeCapability>> distinct_ccs(
    const std::vector<VisibleDevice>& devices);

/// The devices whose compute capability was not sensed, described.
std::string describe_unknown_cc(const std::vector<VisibleDevice>& devices);

}  // namespace gpuenv
