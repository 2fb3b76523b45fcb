// Helpers for the container tests (init, serve jupyter, serve ssh): a
// process running in the background, loopback ports, a tiny HTTP client,
// and a throwaway user account.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "process.h"

namespace gpuenv::testing {

/// ProcessOptions with these variables (and stdin), the default timeout.
inline ProcessOptions with_env(std::map<std::string, std::string> env, std::string stdin_data = "") {
  ProcessOptions o;
  o.env = std::move(env);
  o.stdin_data = std::move(stdin_data);
  return o;
}

/// A program running in the background in its own process group, its
/// stdout and stderr going to one log file. The destructor ends the whole
/// group (SIGTERM, then SIGKILL after 3 s) and reaps it.
class Background {
 public:
  /// Starts argv with a clean environment (PATH, HOME, NO_COLOR, a stand-in
  /// NVML path) plus `env`.
  Background(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env);
  ~Background();
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

  pid_t pid() const { return pid_; }
  /// Everything the program wrote so far.
  std::string log() const;
  /// Waits until the log holds `text`; false after timeout_ms or once the
  /// program has exited without writing it.
  bool wait_for_log(const std::string& text, int timeout_ms);
  /// Waits for the program to exit; false after timeout_ms. Sets
  /// exit_code (or 128+signal).
  bool wait_exit(int timeout_ms, int* exit_code);
  /// Ends every process this one started too (the groups of its children).
  void stop();

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  std::string log_path_;
};

/// A TCP port on 127.0.0.1 that was free a moment ago.
int free_port();

/// True once something accepts connections on 127.0.0.1:port.
bool wait_for_port(int port, int timeout_ms);

/// GET http://127.0.0.1:port/path with the headers; the status code, or -1.
int http_get_status(int port, const std::string& path, const std::vector<std::string>& headers);

/// The direct children of a process (from /proc/PID/task/*/children).
std::vector<pid_t> children_of(pid_t pid);

/// A process's state letter (R, S, Z, ...) from /proc/PID/stat, or 0.
char process_state(pid_t pid);

/// The real, effective, saved and filesystem uids from /proc/PID/status.
std::vector<uid_t> process_uids(pid_t pid);

/// A user for a test. As root: created with useradd (shell /bin/sh, a home
/// under /home, no password but not locked unless `locked`) and deleted
/// afterwards. Not root: the current user, left alone.
class TestUser {
 public:
  explicit TestUser(const std::string& name, bool locked = false);
  ~TestUser();
  TestUser(const TestUser&) = delete;
  TestUser& operator=(const TestUser&) = delete;
  const std::string& name() const { return name_; }
  uid_t uid() const { return uid_; }
  const std::string& home() const { return home_; }
  /// Empty when the user is ready; otherwise why not.
  const std::string& error() const { return error_; }

 private:
  std::string name_, home_, error_;
  uid_t uid_ = 0;
  bool created_ = false;
};

/// A fresh directory, mode 0755, whose parents are neither group- nor
/// world-writable (sshd's StrictModes walks them): under /run as root,
/// else under $HOME. Removed with its contents by the destructor.
class SecureTempDir {
 public:
  SecureTempDir();
  ~SecureTempDir();
  SecureTempDir(const SecureTempDir&) = delete;
  SecureTempDir& operator=(const SecureTempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// A fresh directory under /tmp, removed with its contents by the destructor.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  /// Writes `content` to path()/name (mode 0644) and returns its path.
  std::string file(const std::string& name, const std::string& content) const;

 private:
  std::string path_;
};

/// The repository's tests directory.
std::string tests_dir();

}  // namespace gpuenv::testing
