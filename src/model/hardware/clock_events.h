// NVML's clocks-event reason bits (nvmlClocksEventReasons, formerly
// nvmlClocksThrottleReasons; nvml.h of CUDA 12.2): why a GPU runs below its
// clocks. The one home of these bits: sense stores the mask NVML returns,
// decide and bench read it through these names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpuenv {
namespace clock_event {

inline constexpr std::uint64_t kGpuIdle = 0x1;                    // nothing runs
inline constexpr std::uint64_t kApplicationsClocksSetting = 0x2;  // clocks set by nvidia-smi -ac
inline constexpr std::uint64_t kSwPowerCap = 0x4;                 // the power limit (normal under load)
inline constexpr std::uint64_t kHwSlowdown = 0x8;                 // hardware protection, any cause
inline constexpr std::uint64_t kSyncBoost = 0x10;                 // held to a sync-boost group
inline constexpr std::uint64_t kSwThermalSlowdown = 0x20;         // the driver cools the GPU
inline constexpr std::uint64_t kHwThermalSlowdown = 0x40;         // the hardware cools the GPU
inline constexpr std::uint64_t kHwPowerBrakeSlowdown = 0x80;      // the external power supply asks
inline constexpr std::uint64_t kDisplayClockSetting = 0x100;      // the display clock limits it
/// The reasons a job's verdict counts as throttling (the Timeline's kThermal).
inline constexpr std::uint64_t kThermalBits = kHwSlowdown | kSwThermalSlowdown | kHwThermalSlowdown | kHwPowerBrakeSlowdown;

}  // namespace clock_event

struct ClockEventBit {
  std::uint64_t bit;
  const char* name;  // NVML's name, lower case: "hw_slowdown"
};

/// Every bit, in NVML's order.
inline constexpr ClockEventBit kClockEventBits[] = {
    {clock_event::kGpuIdle, "gpu_idle"},
    {clock_event::kApplicationsClocksSetting, "applications_clocks_setting"},
    {clock_event::kSwPowerCap, "sw_power_cap"},
    {clock_event::kHwSlowdown, "hw_slowdown"},
    {clock_event::kSyncBoost, "sync_boost"},
    {clock_event::kSwThermalSlowdown, "sw_thermal_slowdown"},
    {clock_event::kHwThermalSlowdown, "hw_thermal_slowdown"},
    {clock_event::kHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
    {clock_event::kDisplayClockSetting, "display_clock_setting"},
};

/// NVML's names for the bits set in `mask`, in NVML's order.
std::vector<std::string> clock_event_names(std::uint64_t mask);

}  // namespace gpuenv
