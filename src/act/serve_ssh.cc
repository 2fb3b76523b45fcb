#include "act/serve_ssh.h"

#include <shadow.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "act/init.h"
#include "act/serve_common.h"

namespace gpuenv {
namespace {

constexpr const char* kHostKeyName = "ssh_host_ed25519_key";

struct SshPaths {
  std::string host_key_dir, run_dir;
  std::string host_key() const { return host_key_dir + "/" + kHostKeyName; }
  std::string config() const { return run_dir + "/sshd_config"; }
  std::string authorized_keys() const { return run_dir + "/authorized_keys"; }
  std::string pid_file() const { return run_dir + "/sshd.pid"; }
};

SshPaths paths_for(const SshOptions& o, const Account& a) {
  bool root = geteuid() == 0;
  std::string state = a.home + "/.local/state/gpuenv";
  SshPaths p;
  p.host_key_dir = !o.host_key_dir.empty() ? o.host_key_dir : root ? o.etc_dir + "/ssh" : state + "/ssh";
  p.run_dir = !o.run_dir.empty() ? o.run_dir : root ? "/run/gpuenv/sshd" : state + "/sshd";
  return p;
}

bool carries(const std::string& value) {
  return value.find_first_of(std::string("\n\r\0", 3)) == std::string::npos;
}

std::string line(const std::string& keyword, const std::string& arg) {
  return keyword + " " + arg + "\n";
}

// AuthorizedKeysFile expands %-tokens: a literal % is %%.
std::string escape_percent(const std::string& path) {
  std::string out;
  for (char c : path) out += c == '%' ? std::string("%%") : std::string(1, c);
  return out;
}

bool gather_keys(const SshOptions& o, std::string* keys, std::string* err) {
  if (!o.authorized_keys_file.empty() && !read_file(o.authorized_keys_file, keys, err)) return false;
  if (const char* env = std::getenv("GPUENV_SSH_AUTHORIZED_KEYS")) {
    if (!keys->empty() && keys->back() != '\n') *keys += "\n";
    *keys += env;
  }
  if (!keys->empty() && keys->back() != '\n') *keys += "\n";
  if (count_keys(*keys) > 0) return true;
  *err = "no authorized key: mount a public key file and pass --authorized-keys FILE, or set "
         "GPUENV_SSH_AUTHORIZED_KEYS to the key itself (e.g. \"$(cat ~/.ssh/id_ed25519.pub)\")";
  return false;
}

// sshd with UsePAM no refuses every login of a locked account ('!' in
// /etc/shadow, as useradd leaves it). Only root can read /etc/shadow.
bool check_not_locked(const Account& a, std::string* err) {
  if (geteuid() != 0) return true;
  const struct spwd* sp = getspnam(a.name.c_str());
  if (!sp || !sp->sp_pwdp || sp->sp_pwdp[0] != '!') return true;
  *err = "user " + a.name + " is locked ('!' in /etc/shadow), and sshd refuses every login of a " +
         "locked account; give it no password instead: usermod -p '*' " + a.name;
  return false;
}

bool ensure_host_key(const SshPaths& p, std::string* err) {
  if (!make_dirs(p.host_key_dir, 0700, err)) return false;
  if (access(p.host_key().c_str(), F_OK) == 0) {
    chmod(p.host_key().c_str(), 0600);  // sshd ignores a key others can read
    return true;
  }
  std::fprintf(stderr, "gpuenv: generating the SSH host key %s\n", p.host_key().c_str());
  return run_program({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "gpuenv host key", "-f",
                      p.host_key()},
                     err);
}

bool write_files(const SshPaths& p, const SshdConfig& c, const std::string& keys, std::string* err) {
  if (geteuid() == 0 && !make_dirs("/run/sshd", 0755, err)) return false;  // sshd's privsep dir
  return make_dirs(p.run_dir, 0755, err) && ensure_host_key(p, err) &&
         write_file_atomic(p.authorized_keys(), keys, 0644, err) &&
         write_file_atomic(p.config(), render_sshd_config(c), 0600, err);
}

EnvList passthrough_env() {
  EnvList out;
  for (const auto& name : ssh_passthrough_names())
    if (const char* v = std::getenv(name.c_str())) out.emplace_back(name, v);
  return out;
}

SshdConfig config_for(const SshOptions& o, const Account& a, const SshPaths& p, const Plan& plan) {
  SshdConfig c;
  c.port = o.port;
  c.listen = o.ip;
  c.user = a.name;
  c.host_keys = {p.host_key()};
  c.authorized_keys = p.authorized_keys();
  c.pid_file = p.pid_file();
  std::vector<std::string> skipped;
  c.env = session_env(plan, passthrough_env(), &skipped);
  for (const auto& name : skipped)
    std::fprintf(stderr, "gpuenv: warning: %s left out of SSH sessions: its value holds a newline\n",
                 name.c_str());
  return c;
}

bool check_sshd(const std::string& sshd, std::string* err) {
  if (!sshd.empty() && sshd[0] == '/' && access(sshd.c_str(), X_OK) == 0) return true;
  *err = "sshd " + sshd + ": " + (sshd.empty() || sshd[0] != '/' ? "must be an absolute path"
                                                                   : std::strerror(errno)) +
         " (install openssh-server, or pass --sshd PATH)";
  return false;
}

}  // namespace

const std::vector<std::string>& ssh_passthrough_names() {
  static const std::vector<std::string> kNames = {"PATH", "LD_LIBRARY_PATH"};
  return kNames;
}

EnvList session_env(const Plan& plan, const EnvList& passthrough, std::vector<std::string>* skipped) {
  EnvList out;
  auto add = [&](const std::string& name, const std::string& value) {
    if (carries(value)) out.emplace_back(name, value);
    else skipped->push_back(name);
  };
  for (const auto& [name, value] : passthrough) add(name, value);
  for (const auto& s : plan.settings) add(s.name, s.value);
  return out;
}

std::string sshd_quote(const std::string& arg) {
  std::string out = "\"";
  for (char c : arg) {
    if (c == '\\' || c == '"' || c == '\'') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string render_sshd_config(const SshdConfig& c) {
  std::string out = "# Written by `gpuenv serve ssh` at every start; edits are lost.\n";
  out += line("Port", std::to_string(c.port));
  if (!c.listen.empty()) out += line("ListenAddress", sshd_quote(c.listen));
  for (const auto& key : c.host_keys) out += line("HostKey", sshd_quote(key));
  out += line("PidFile", sshd_quote(c.pid_file));
  out += line("AuthorizedKeysFile", sshd_quote(escape_percent(c.authorized_keys)));
  out += "AuthenticationMethods publickey\nPubkeyAuthentication yes\nPermitRootLogin no\n"
         "PasswordAuthentication no\nKbdInteractiveAuthentication no\nHostbasedAuthentication no\n"
         "PermitEmptyPasswords no\nPermitUserEnvironment no\nUsePAM no\nStrictModes yes\n"
         "X11Forwarding no\nPrintMotd no\nAcceptEnv LANG LC_*\n"
         "Subsystem sftp internal-sftp\n";
  out += line("AllowUsers", c.user);
  if (c.env.empty()) return out;
  // sshd honours only the first SetEnv line: every variable goes on it.
  std::string args;
  for (const auto& [name, value] : c.env) args += " " + sshd_quote(name + "=" + value);
  return out + "SetEnv" + args + "\n";
}

int count_keys(const std::string& text) {
  int n = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    size_t first = text.find_first_not_of(" \t\r", start);
    if (first < end && text[first] != '#') ++n;
    start = end + 1;
  }
  return n;
}

int serve_ssh(const SshOptions& o, const std::function<int(Plan*)>& make_plan, std::string* err) {
  Account a;
  std::string keys;
  if (!choose_account(o.user, false, &a, err) || !check_not_locked(a, err) ||
      !gather_keys(o, &keys, err)) {
    *err = "refusing to start sshd: " + *err;
    return kExitServeConfig;
  }
  if (!check_sshd(o.sshd, err)) return 127;
  if (a.uid != geteuid()) use_account_env(a);  // the plan is for the user's sessions
  Plan plan;
  if (int code = make_plan(&plan)) return code;
  SshPaths p = paths_for(o, a);
  if (!write_files(p, config_for(o, a, p, plan), keys, err)) return 1;
  std::fprintf(stderr, "gpuenv: sshd on port %d for %s (%d authorized keys): ssh -p %d %s@HOST\n",
               o.port, a.name.c_str(), count_keys(keys), o.port, a.name.c_str());
  return exec_program({o.sshd, "-D", "-e", "-f", p.config()}, err);
}

}  // namespace gpuenv
