// `gpuenv init` as a container entrypoint: start the command as a child,
// forward signals to it, reap zombies, and return its exit status.
//
// Why fork+exec+wait and not exec: behind tini, init is the process that
// `docker stop` reaches (tini forwards SIGTERM to it). Exec would also work
// for signals, but init stays a parent so that it can reap the orphans
// re-parented to it (it is a child subreaper) and report how the command
// ended in the structured log. The child gets its own process group and, when
// init holds the terminal, the terminal's foreground: Ctrl-C then reaches the
// command once, from the terminal, and not a second time through init.
#pragma once

#include <signal.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace gpuenv {

/// The signals init forwards to its child.
const std::vector<int>& forwarded_signals();

/// How the child ended.
struct ChildExit {
  bool started = false;  // false: the command could not be executed
  int code = 0;          // exit status; 128+signal when a signal ended it
  int signal = 0;        // the signal that ended it, or 0
  bool stop_forwarded = false;  // a stop signal (sys::stop_signals) reached this process and was passed on
};

/// Holds the forwarded signals and SIGCHLD blocked from construction on.
/// Construct it before anything can start a thread (sensing may load NVIDIA
/// libraries that do), so that no thread takes a signal meant for the child;
/// a signal that arrives early is forwarded once the child runs. One that
/// arrives after the child ended is dropped when it is destroyed: the
/// child's exit status is what this process returns.
class Supervisor {
 public:
  Supervisor();
  ~Supervisor();
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  /// Starts argv (looked up on PATH) with this process's environment, waits
  /// for it while forwarding signals and reaping every child, and returns how
  /// it ended. When it cannot be started, code is 127 (not found) or 126 and
  /// *err says why.
  /// `started`, when given, is called once the command runs (exec
  /// succeeded), before the wait: where `gpuenv run` starts its watcher.
  ChildExit run(const std::vector<std::string>& argv, std::string* err,
                const std::function<void(pid_t)>& started = nullptr);

 private:
  sigset_t old_mask_;
  struct sigaction old_ttin_, old_ttou_;
};

/// While init senses (before the child exists), a SIGTERM, SIGINT, SIGHUP or
/// SIGQUIT must still end it, and sensing must not hang forever. Construct
/// after the Supervisor (the signals are blocked): a thread takes those
/// signals and calls on_signal(sig), and calls on_timeout() once `limit_ms`
/// pass; both are expected to end the process (init exits 128+sig, or 1).
/// The destructor stops the thread: later signals go to the child.
class SenseGuard {
 public:
  SenseGuard(int limit_ms, std::function<void(int)> on_signal, std::function<void()> on_timeout);
  ~SenseGuard();
  SenseGuard(const SenseGuard&) = delete;
  SenseGuard& operator=(const SenseGuard&) = delete;

 private:
  void watch(int limit_ms);
  std::atomic<bool> done_{false};
  std::function<void(int)> on_signal_;
  std::function<void()> on_timeout_;
  std::thread thread_;
};

/// True when a stop signal (sys::stop_signals) is pending, held by a
/// Supervisor: what cuts short the work `gpuenv run` does after the child
/// ended (recording it), so that a stop is never held for it.
bool stop_signal_pending();

}  // namespace gpuenv
