#include "sys/bytes.h"

#include <cstdio>

namespace gpuenv {
namespace {

constexpr std::uint64_t kGiB = 1ull << 30;

std::string one_decimal(double v, const char* unit) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, unit);
  return buf;
}

}  // namespace

std::string human_bytes(std::uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? std::to_string(b) + " B" : one_decimal(v, units[u]);
}

std::string gib_text(std::uint64_t b) { return one_decimal(static_cast<double>(b) / kGiB, "GiB"); }

std::string bytes_text(std::uint64_t b) {
  if (b < kGiB) return std::to_string(b >> 20) + " MiB";
  double g = static_cast<double>(b) / kGiB;
  if (g == static_cast<double>(static_cast<std::uint64_t>(g))) return std::to_string(static_cast<std::uint64_t>(g)) + " GiB";
  return one_decimal(g, "GiB");
}

}  // namespace gpuenv
