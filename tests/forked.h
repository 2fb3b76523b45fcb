// Runs a body in several forked processes at once, for tests of concurrent
// writers (the store under 8 ranks).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <vector>

namespace gpuenv::testing {

/// Forks `n` children, all started before any is waited for; child i runs
/// body(i) and exits 0 when it returns true, 1 otherwise. Returns each
/// child's exit status (-1 when it did not exit normally or fork failed).
inline std::vector<int> run_forked(int n, const std::function<bool(int)>& body) {
  std::vector<pid_t> children;
  for (int i = 0; i < n; ++i) {
    pid_t pid = fork();
    if (pid == 0) _exit(body(i) ? 0 : 1);
    children.push_back(pid);
  }
  std::vector<int> codes;
  for (pid_t pid : children) {
    int status = 0;
    bool exited = pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status);
    codes.push_back(exited ? WEXITSTATUS(status) : -1);
  }
  return codes;
}

}  // namespace gpuenv::testing
