// `gpuenv serve jupyter` and `gpuenv serve ssh`'s sequences, the services
// the image starts (docs/container.md): choose the service's user (refusing
// root, or a user sshd would lock out), find the program, become the user,
// decide the plan as that user, put the token or sshd's files in place, and
// exec the program with the plan in its environment (Jupyter) or its
// sessions' (sshd's SetEnv). Like flow/export.h, each sequence is handed
// what touches the system (ServeEnv), so a test runs it whole with fakes;
// cli/cmd_serve.cc only parses the flags into the options.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "act/log.h"
#include "act/serve/serve_common.h"
#include "act/serve/serve_jupyter.h"
#include "act/serve/serve_ssh.h"
#include "model/machine.h"
#include "model/plan.h"

namespace gpuenv::flow {

/// What the sequences are handed: the real ones in a command, fakes in a test.
struct ServeEnv {
  /// This machine and the options its plan is decided with, sensed once the
  /// service has become its user; false when it cannot be sensed (the
  /// reason already said).
  std::function<bool(Machine*, Options*)> sense;
  /// The service's account (choose_account); false with *err.
  std::function<bool(const std::string& requested, bool allow_root, Account* out, std::string* err)> account =
      choose_account;
  std::function<uid_t()> euid = geteuid;
  /// The first of `names` found executable on PATH, or "" (find_on_path).
  std::function<std::string(const std::vector<std::string>& names)> find_program = find_on_path;
  /// Jupyter's user, become for good when root (become_service_user).
  std::function<bool(const Account& a, std::string* err)> become = become_service_user;
  /// HOME, USER, LOGNAME and SHELL for sshd's user (use_account_env).
  std::function<void(const Account& a)> use_account_env = gpuenv::use_account_env;
  /// sshd's directories, host key, authorized keys and configuration
  /// (install_sshd): 0, or the status to end with.
  std::function<int(const SshOptions& o, const Account& a, const KeyLines& keys, const Plan& plan,
                    std::string* config, std::string* err)>
      install_sshd = gpuenv::install_sshd;
  std::function<const char*(const char*)> getenv = [](const char* n) { return std::getenv(n); };
  std::function<void(const std::string& name, const std::string& value)> setenv =
      [](const std::string& name, const std::string& value) { ::setenv(name.c_str(), value.c_str(), 1); };
  std::function<void(const std::string& name)> unsetenv = [](const std::string& name) { ::unsetenv(name.c_str()); };
  /// Replaces this process with argv (exec_program); returns only when that
  /// fails: 127 (not found) or 126, with *err.
  std::function<int(const std::vector<std::string>& argv, std::string* err)> exec = exec_program;
  MessageSink log = log_message;                                      // every line the service says
  std::function<void(const LogEvent&)> log_event = gpuenv::log_event;  // a generated token's own lines
};

/// Starts Jupyter (act/serve/serve_jupyter.h). Returns only on failure, the
/// reason said: kExitServeConfig a refusal (root without --allow-root, a
/// user that cannot be used, an unreadable --root-dir or a bad token), 127
/// no Jupyter installed, kExitBadInput the machine cannot be sensed, or
/// exec's 127 or 126.
int serve_jupyter(const JupyterOptions& o, const ServeEnv& env);

/// Starts sshd (act/serve/serve_ssh.h). Returns only on failure, the reason
/// said: kExitServeConfig a refusal (root, a locked user, no authorized
/// key, directories others could change), 127 sshd missing, 1 a file
/// cannot be written, kExitBadInput the machine cannot be sensed, or
/// exec's 127 or 126.
int serve_ssh(const SshOptions& o, const ServeEnv& env);

}  // namespace gpuenv::flow
