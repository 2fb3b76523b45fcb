#include "model/hardware/clock_events.h"

namespace gpuenv {

std::vector<std::string> clock_event_names(std::uint64_t mask) {
  std::vector<std::string> out;
  for (const auto& b : kClockEventBits)
    if (mask & b.bit) out.push_back(b.name);
  return out;
}

}  // namespace gpuenv
