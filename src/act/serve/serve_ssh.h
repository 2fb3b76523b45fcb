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

#include "act/serve/serve_common.h"
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
  bool allow_forwarding = false;     // --allow-forwarding, GPUENV_SSH_ALLOW_FORWARDING=1
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
  bool allow_forwarding = false;  // AllowTcpForwarding local (ssh -L), else no
};

/// The algorithms sshd offers: OpenSSH 9.2's modern ones only (no SHA-1,
/// no CBC, no NIST-curve key exchange).
inline constexpr const char* kSshKex =
    "sntrup761x25519-sha512@openssh.com,curve25519-sha256,curve25519-sha256@libssh.org";
inline constexpr const char* kSshCiphers =
    "chacha20-poly1305@openssh.com,aes256-gcm@openssh.com,aes128-gcm@openssh.com,aes256-ctr,"
    "aes128-ctr";
inline constexpr const char* kSshMacs =
    "hmac-sha2-256-etm@openssh.com,hmac-sha2-512-etm@openssh.com,umac-128-etm@openssh.com";

/// The largest --authorized-keys file gpuenv reads.
inline constexpr size_t kMaxAuthorizedKeysBytes = 1 << 20;

/// The key types an authorized key may have: OpenSSH 9.2's, less DSA
/// (which it no longer accepts), and their certificates.
const std::vector<std::string>& ssh_key_types();

/// Why `line` is not an OpenSSH public key, "" when it is one: an optional
/// options field (quotes as sshd reads them), one of ssh_key_types(), and a
/// base64 blob whose leading string is that type. The reason never quotes
/// the line, which may come from a file that holds secrets.
std::string public_key_problem(const std::string& line);

/// Authorized keys gathered from several sources.
struct KeyLines {
  std::string text;  // the key lines, each ending in a newline
  int keys = 0;
  std::vector<std::string> rejected;  // "SOURCE line N: why"
};

/// Adds the lines of `text` that are public keys to *out; blank lines and
/// comments are dropped, any other line is left out and noted in rejected.
void add_key_lines(const std::string& text, const std::string& source, KeyLines* out);

/// Variables passed from gpuenv's environment into SSH sessions besides the
/// plan: PATH and LD_LIBRARY_PATH, which images set (/opt/conda/bin) and sshd
/// would otherwise replace with its defaults. Each is narrowed to the user
/// with user_search_path; PATH falls back to kUserPath when nothing is left.
const std::vector<std::string>& ssh_passthrough_names();

/// gpuenv's own configuration (the cache root, the NVIDIA libraries to load,
/// the bench plugin) and the user's pip on it (act/init.h, python_user_base),
/// passed to sessions as the container has it, so that gpuenv in a session
/// sees what init saw and `pip install` lands where it does for a job.
const std::vector<std::string>& ssh_config_names();

/// The PATH of sessions when gpuenv's own leaves nothing the user can use.
inline constexpr const char* kUserPath = "/usr/local/bin:/usr/bin:/bin";

/// The passthrough variables' values for `a`'s sessions, from `get` (getenv).
EnvList passthrough_env(const Account& a, const std::function<const char*(const char*)>& get);

/// The sessions' environment: `passthrough` then the plan's settings. A value
/// sshd_config cannot carry (newline, CR, NUL) is left out and its name
/// appended to *skipped.
EnvList session_env(const Plan& plan, const EnvList& passthrough, std::vector<std::string>* skipped);

/// One sshd_config argument in double quotes, with \ " and ' escaped as sshd
/// (OpenSSH 8.7+) reads them back.
std::string sshd_quote(const std::string& arg);

/// The configuration file's text.
std::string render_sshd_config(const SshdConfig& c);

/// The authorized keys from --authorized-keys and GPUENV_SSH_AUTHORIZED_KEYS
/// (read through `get`); each line left out is said. False with *err when
/// the file cannot be read or no key is left.
bool gather_keys(const SshOptions& o, const std::function<const char*(const char*)>& get, KeyLines* keys,
                 std::string* err);

/// False (with *err) for an account sshd would refuse every login of: one
/// locked in /etc/shadow (read only as root).
bool check_not_locked(const Account& a, std::string* err);

/// Whether `sshd` is an absolute path to an executable; *err says why not.
bool check_sshd(const std::string& sshd, std::string* err);

/// Puts sshd's files in place for `a`: checks that only root can change
/// the run and host key directories and a kept host key
/// (kExitServeConfig), creates the host key on first start, writes the
/// authorized keys and the configuration (1 when that fails); 0 when all is
/// in place, with the configuration's path in *config.
int install_sshd(const SshOptions& o, const Account& a, const KeyLines& keys, const Plan& plan, std::string* config,
                 std::string* err);

// The sequence that starts sshd is flow/serve.h's.

}  // namespace gpuenv
