// `gpuenv serve ssh`: OpenSSH's sshd in the foreground with a configuration
// gpuenv writes: key logins for one non-root user, nothing else.
//
// SSH sessions get the plan through `SetEnv` in that configuration: sshd sets
// it for every session, interactive or `ssh host cmd`, before any shell
// starts, and it needs no file in the user's home (~/.ssh/environment would
// need PermitUserEnvironment, which also lets users set LD_PRELOAD for sshd's
// children). Login shells read /etc/profile.d/gpuenv.sh (from init) too.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "model/plan.h"

namespace gpuenv {

struct SshOptions {
  int port = 22;
  std::string ip;                    // ListenAddress; "" = every address
  std::string user;                  // --user, else GPUENV_USER
  std::string host_key_dir;          // "" = <etc dir>/ssh as root, else ~/.local/state/gpuenv/ssh
  std::string run_dir;               // "" = /run/gpuenv/sshd as root, else ~/.local/state/gpuenv/sshd
  std::string authorized_keys_file;  // --authorized-keys (GPUENV_SSH_AUTHORIZED_KEYS adds keys)
  std::string etc_dir = "/etc/gpuenv";
  std::string sshd = "/usr/sbin/sshd";
};

using EnvList = std::vector<std::pair<std::string, std::string>>;

/// What gpuenv writes into sshd_config.
struct SshdConfig {
  int port = 22;
  std::string listen;  // "" = every address
  std::string user;    // the only user allowed in
  std::vector<std::string> host_keys;
  std::string authorized_keys;
  std::string pid_file;
  EnvList env;  // SetEnv: every session gets these
};

/// Variables passed from gpuenv's environment into SSH sessions besides the
/// plan: PATH and LD_LIBRARY_PATH, which images set (/opt/conda/bin) and sshd
/// would otherwise replace with its defaults.
const std::vector<std::string>& ssh_passthrough_names();

/// The sessions' environment: `passthrough` then the plan's settings. A value
/// sshd_config cannot carry (newline, CR, NUL) is left out and its name
/// appended to *skipped.
EnvList session_env(const Plan& plan, const EnvList& passthrough, std::vector<std::string>* skipped);

/// One sshd_config argument in double quotes, with \ " and ' escaped as sshd
/// (OpenSSH 8.7+) reads them back.
std::string sshd_quote(const std::string& arg);

/// The configuration file's text.
std::string render_sshd_config(const SshdConfig& c);

/// How many lines of an authorized_keys text hold a key (not blank, not #).
int count_keys(const std::string& text);

/// Chooses the user (never root), gathers the authorized keys (refusing to
/// start with none), computes the plan with `make_plan` for that user,
/// creates the host key on first start, writes the configuration and execs
/// sshd -D -e. Returns only on failure: kExitServeConfig, 127 when sshd is
/// missing, 1 when a file cannot be written, or make_plan's code.
int serve_ssh(const SshOptions& o, const std::function<int(Plan*)>& make_plan, std::string* err);

}  // namespace gpuenv
