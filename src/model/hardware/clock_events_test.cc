#include "model/hardware/clock_events.h"

#include <gtest/gtest.h>

#include <set>

namespace gpuenv {
namespace {

TEST(ClockEvents, NamesTheBitsSetInNvmlsOrder) {
  EXPECT_EQ(clock_event_names(0), std::vector<std::string>{});
  EXPECT_EQ(clock_event_names(clock_event::kHwThermalSlowdown | clock_event::kSwPowerCap),
            (std::vector<std::string>{"sw_power_cap", "hw_thermal_slowdown"}));
  EXPECT_EQ(clock_event_names(0x200), std::vector<std::string>{});  // a bit NVML may add later
}

TEST(ClockEvents, EveryRowIsOneBitOfItsOwnWithItsOwnName) {
  std::set<std::string> names;
  std::uint64_t seen = 0;
  for (const auto& b : kClockEventBits) {
    EXPECT_EQ(b.bit & (b.bit - 1), 0u) << b.name;  // exactly one bit
    EXPECT_EQ(seen & b.bit, 0u) << b.name;
    seen |= b.bit;
    EXPECT_TRUE(names.insert(b.name).second) << b.name;
  }
  EXPECT_EQ(seen, 0x1ffu);  // nvml.h: nvmlClocksEventReasonGpuIdle .. DisplayClockSetting
}

}  // namespace
}  // namespace gpuenv
