// Waiting for the event a test means (a file appearing, a round counted,
// a line in a log), never for a fixed time: a loaded two-core machine can
// stall any process for seconds, so a test that sleeps and then looks can
// fail there with nothing wrong. The bound is only how long a test waits
// for an event that never comes.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace gpuenv::testing {

/// How long a test waits for an event before it fails: far beyond what the
/// event takes even on a loaded machine, well under ctest's 120 s.
inline constexpr std::chrono::seconds kEventBound{30};

/// Asks done() every `every` until it says true (returns true) or `bound`
/// has passed (done() is asked once more then).
inline bool wait_until(const std::function<bool()>& done,
                       std::chrono::milliseconds bound = kEventBound,
                       std::chrono::milliseconds every = std::chrono::milliseconds(10)) {
  auto end = std::chrono::steady_clock::now() + bound;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(every);
  }
  return done();
}

}  // namespace gpuenv::testing
