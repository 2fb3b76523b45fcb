#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>

#include "act/log.h"
#include "cli/app.h"
#include "model/exit_codes.h"
#include "sys/terminal.h"

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

// Into a file or pipe, stdout keeps up to 1 MiB before writing, so that a
// command's output meets its first write error in the final flush, where
// errno still names it; a terminal stays line-buffered.
void buffer_stdout() {
  static char buffer[1 << 20];
  if (!gpuenv::is_terminal(stdout)) std::setvbuf(stdout, buffer, _IOFBF, sizeof buffer);
}

// Every command's stdout, checked here once it has returned: a write that
// failed (a full disk, /dev/full, an I/O error), the final flush and the
// close. A command that would exit 0 exits 1 instead, naming the error; one
// that already failed, or `run`'s job status, keeps its code.
int check_stdout(int rc) {
  bool flush_failed = std::fflush(stdout) != 0;
  int e = flush_failed ? errno : 0;  // an earlier failed write's errno is gone
  bool failed = flush_failed || std::ferror(stdout);
  // EBADF: stdout was closed (`>&-`) and nothing was written to it.
  if (std::fclose(stdout) != 0 && errno != EBADF && !failed) failed = true, e = errno;
  if (!failed) return rc;
  std::string why = e ? std::strerror(e) : "a write failed";
  gpuenv::log_message(gpuenv::Severity::kError, "write failed", "writing stdout: " + why, {{"path", "stdout"}});
  return rc == gpuenv::kExitOk ? int(gpuenv::kExitFailure) : rc;
}

}  // namespace

int main(int argc, char** argv) {
  buffer_stdout();
  int rc = check_stdout(guarded_run(argc, argv));
#ifndef GPUENV_ASAN
  // A one-shot process: skip the libraries' exit-time teardown. NVML's
  // is a noticeable part of detect's time, and the kernel releases its
  // handles when the process ends anyway. Every object of ours is gone by
  // now; only the C streams need flushing. (LeakSanitizer needs the normal
  // exit, so sanitizer builds take it.)
  std::fflush(nullptr);
  _exit(rc);
#endif
  return rc;
}
