#include "model/hardware/measured_gains.h"

#include <cstdio>

namespace gpuenv {

std::string describe(const MeasuredGain& g) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1fx", g.after / g.before);
  std::string out = std::string(buf) + " for " + std::string(g.workload);
  std::snprintf(buf, sizeof buf, " (%.1fk -> %.1fk ", g.before / 1000, g.after / 1000);
  return out + buf + std::string(g.unit) + ")";
}

}  // namespace gpuenv
