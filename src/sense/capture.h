// Runs a short-lived program and captures its standard output, bounded in
// time and size: for asking an interpreter a question (sense/python/torch.cc), never
// for the user's command.
#pragma once

#include <string>
#include <vector>

namespace gpuenv {

struct CaptureLimits {
  int timeout_ms = 5000;
  std::size_t max_bytes = 1 << 20;
};

/// posix_spawn()s argv[0] (a path, not looked up on $PATH) with this
/// process's environment, stdin from /dev/null and stderr discarded, and
/// reads its stdout. True when it exits 0 within the limits; otherwise
/// false with *err naming what went wrong (killed after the timeout, output
/// over the limit, an exit status or signal). Never waits past the timeout.
bool capture_output(const std::vector<std::string>& argv, const CaptureLimits& limits, std::string* out,
                    std::string* err);

}  // namespace gpuenv
