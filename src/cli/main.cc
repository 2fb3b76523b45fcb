#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <new>

#include "act/log.h"
#include "cli/app.h"
#include "cli/exit_codes.h"

#if defined(__SANITIZE_ADDRESS__)
#define GPUENV_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GPUENV_ASAN 1
#endif
#endif

namespace {

// run_cli, with any exception that escapes it (an allocation that fails,
// under `ulimit -v` or on a hostile input a bound missed) turned into a
// message and exit 1 instead of std::terminate's abort.
int guarded_run(int argc, char** argv) {
  try {
    return gpuenv::run_cli(argc, argv);
  } catch (const std::bad_alloc&) {
    // Written without allocating: after bad_alloc there may be no memory left.
    gpuenv::log_without_allocating(
        "out of memory",
        "out of memory (an allocation failed: is `ulimit -v` or the cgroup's memory limit too low?)");
  } catch (const std::exception& e) {
    gpuenv::log_message(gpuenv::Severity::kError, "internal error", std::string("internal error: ") + e.what());
  } catch (...) {
    gpuenv::log_message(gpuenv::Severity::kError, "internal error", "internal error: an unknown exception");
  }
  return gpuenv::kExitFailure;
}

}  // namespace

int main(int argc, char** argv) {
  int rc = guarded_run(argc, argv);
#ifndef GPUENV_ASAN
  // A one-shot process: skip the libraries' exit-time teardown. NVML's
  // takes ~3 ms of detect's ~25 on an H200, and the kernel releases its
  // handles when the process ends anyway. Every object of ours is gone by
  // now; only the C streams need flushing. (LeakSanitizer needs the normal
  // exit, so sanitizer builds take it.)
  std::fflush(nullptr);
  _exit(rc);
#endif
  return rc;
}
