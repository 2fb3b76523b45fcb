// Byte counts as people read them, in binary units (1 GiB = 2^30 bytes).
// One home for the three forms gpuenv prints; which form a message uses is
// its caller's choice (tests pin each).
#pragma once

#include <cstdint>
#include <string>

namespace gpuenv {

/// The largest unit that keeps the figure at 1 or more, one decimal:
/// "1.5 GiB", "64.0 MiB", "512 B" (bytes whole). Reports and logs.
std::string human_bytes(std::uint64_t bytes);

/// Always GiB, one decimal: "0.5 GiB", "80.0 GiB". What bench says a case
/// needs and a GPU has.
std::string gib_text(std::uint64_t bytes);

/// GiB from 1 GiB up, whole when whole ("64 GiB", "1.5 GiB"); below it
/// whole MiB, rounded down ("64 MiB"). Doctor's findings.
std::string bytes_text(std::uint64_t bytes);

}  // namespace gpuenv
