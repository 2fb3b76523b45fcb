// Small phrases every layer shares: one home each, so they cannot drift.
#pragma once

#include <ctime>
#include <string>
#include <vector>

#include "model/machine.h"

namespace gpuenv {

/// The items with `sep` between them: join({"a", "b"}, ", ") -> "a, b".
std::string join(const std::vector<std::string>& items, const std::string& sep);

/// The comma-separated items of `s`, each trimmed of spaces and tabs, empty
/// ones left out: "a, b,,c" -> {"a", "b", "c"}.
std::vector<std::string> split_commas(const std::string& s);

/// `s` in ASCII lower case.
std::string ascii_lower(std::string s);

/// `t` as RFC 3339 UTC, to the second: "2025-03-04T12:00:00Z".
std::string utc_time(std::time_t t);
/// utc_time of the present second.
std::string utc_now();

/// "GPU 0 (NVIDIA H200)", or "GPU 0" when the name was not sensed.
std::string gpu_label(const Gpu& g);

}  // namespace gpuenv
