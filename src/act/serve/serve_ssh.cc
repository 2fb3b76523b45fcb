#include "act/serve/serve_ssh.h"

#include <shadow.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "act/init.h"
#include "act/log.h"
#include "act/serve/serve_common.h"
#include "sys/fs.h"
#include "sys/text.h"

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

void report_rejected(const std::vector<std::string>& rejected) {
  constexpr size_t kShown = 10;
  for (size_t i = 0; i < rejected.size() && i < kShown; ++i)
    log_message(Severity::kWarning, "key rejected", rejected[i] + "; left out");
  if (rejected.size() > kShown)
    log_message(Severity::kWarning, "key rejected",
                "and " + std::to_string(rejected.size() - kShown) + " more lines left out",
                {{"more", rejected.size() - kShown}});
}

// Creates both directories and checks that only root (or gpuenv's own user)
// can change them; from here on the paths are the resolved ones.
bool prepare_dirs(SshPaths* p, std::string* err) {
  if (geteuid() == 0 && !sys::make_dirs("/run/sshd", 0755, err)) return false;  // sshd's privsep dir
  return sys::make_dirs(p->run_dir, 0755, err) && check_private_dir(p->run_dir, &p->run_dir, err) &&
         sys::make_dirs(p->host_key_dir, 0700, err) &&
         check_private_dir(p->host_key_dir, &p->host_key_dir, err);
}

// A kept host key must be a regular file of gpuenv's user, mode 0600 (sshd
// ignores a key others can read).
bool check_host_key(const std::string& path, std::string* err) {
  struct stat st;
  int fd = fs::open_regular_nofollow(path, &st, err);
  if (fd < 0) return false;
  if (st.st_uid != geteuid())
    *err = path + " is owned by uid " + std::to_string(st.st_uid) + ", not " +
           std::to_string(geteuid());
  else if ((st.st_mode & 07777) != 0600 && fchmod(fd, 0600) != 0)
    *err = fs::errno_text("fchmod", path);
  close(fd);
  return err->empty();
}

bool host_key_exists(const SshPaths& p) {
  struct stat st;
  return lstat(p.host_key().c_str(), &st) == 0;
}

bool generate_host_key(const SshPaths& p, std::string* err) {
  log_message(Severity::kInfo, "host key", "generating the SSH host key " + p.host_key(), {{"path", p.host_key()}});
  return run_program({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "gpuenv host key", "-f",
                      p.host_key()},
                     err);
}

// The copy sshd reads (as the user, under StrictModes): owned by root and
// readable by the user's group, so the user can read but not add keys.
bool write_keys(const SshPaths& p, const Account& a, const std::string& keys, std::string* err) {
  if (!write_file_atomic(p.authorized_keys(), keys, 0640, err)) return false;
  if (geteuid() != 0 || lchown(p.authorized_keys().c_str(), 0, a.gid) == 0) return true;
  *err = fs::errno_text("lchown", p.authorized_keys());
  return false;
}

SshdConfig config_for(const SshOptions& o, const Account& a, const SshPaths& p, const Plan& plan) {
  SshdConfig c;
  c.port = o.port;
  c.listen = o.ip;
  c.user = a.name;
  c.host_keys = {p.host_key()};
  c.authorized_keys = p.authorized_keys();
  c.pid_file = p.pid_file();
  c.allow_forwarding = o.allow_forwarding;
  std::vector<std::string> skipped;
  c.env = session_env(plan, passthrough_env(a, std::getenv), &skipped);
  for (const auto& name : skipped)
    log_message(Severity::kWarning, "skipped", name + " left out of SSH sessions: its value holds a newline",
                {{"name", name}});
  return c;
}

// Checks the directories and a kept host key (kExitServeConfig), then
// makes the host key if there is none and writes the keys and sshd_config
// (1 when that fails). 0 when all is in place.
int install(const SshOptions& o, const Account& a, const KeyLines& keys, const Plan& plan,
            SshPaths* p, std::string* err) {
  if (!prepare_dirs(p, err) || (host_key_exists(*p) && !check_host_key(p->host_key(), err))) {
    *err = "refusing to start sshd: " + *err;
    return kExitServeConfig;
  }
  bool ok = (host_key_exists(*p) || generate_host_key(*p, err)) && write_keys(*p, a, keys.text, err) &&
            write_file_atomic(p->config(), render_sshd_config(config_for(o, a, *p, plan)), 0600, err);
  return ok ? 0 : 1;
}

bool is_space(char c) { return c == ' ' || c == '\t'; }

// The word at *pos (up to a space or tab); *pos moves past it and the blanks after.
std::string next_word(const std::string& line, size_t* pos) {
  size_t end = *pos;
  while (end < line.size() && !is_space(line[end])) ++end;
  std::string word = line.substr(*pos, end - *pos);
  while (end < line.size() && is_space(line[end])) ++end;
  *pos = end;
  return word;
}

// Moves *pos past an options field as sshd does (sshkey_advance_past_options):
// to the first blank outside double quotes, \" never toggling. False when a
// quote is left open.
bool skip_options(const std::string& line, size_t* pos) {
  bool quoted = false;
  size_t i = *pos;
  for (; i < line.size() && (quoted || !is_space(line[i])); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '"') ++i;
    else if (line[i] == '"') quoted = !quoted;
  }
  if (quoted) return false;
  while (i < line.size() && is_space(line[i])) ++i;
  *pos = i;
  return true;
}

int base64_digit(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  return c == '+' ? 62 : c == '/' ? 63 : -1;
}

// Strict base64, padded as OpenSSH writes it.
bool decode_base64(const std::string& in, std::string* out) {
  size_t data = in.find_last_not_of('=') + 1;  // npos + 1 == 0 for all '='
  if (in.empty() || in.size() % 4 != 0 || in.size() - data > 2) return false;
  uint32_t bits = 0;
  int count = 0;
  for (size_t i = 0; i < data; ++i) {
    int d = base64_digit(in[i]);
    if (d < 0) return false;
    bits = (bits << 6) | static_cast<uint32_t>(d);
    if ((count += 6) >= 8) out->push_back(static_cast<char>((bits >> (count -= 8)) & 0xff));
  }
  return true;
}

// The first SSH wire string of a key blob: a big-endian uint32 length, then the bytes.
bool leading_string(const std::string& blob, std::string* out) {
  if (blob.size() < 4) return false;
  uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n = (n << 8) | static_cast<unsigned char>(blob[i]);
  if (n > blob.size() - 4) return false;
  *out = blob.substr(4, n);
  return true;
}

bool is_key_type(const std::string& word) {
  const auto& types = ssh_key_types();
  return std::find(types.begin(), types.end(), word) != types.end();
}

// The type and blob from *pos on.
std::string key_problem(const std::string& line, size_t pos) {
  std::string type = next_word(line, &pos);
  if (type.empty()) return "no key type";
  if (!is_key_type(type)) return "not a key type OpenSSH accepts";
  std::string blob, inner;
  if (!decode_base64(next_word(line, &pos), &blob)) return "the key is not base64";
  if (!leading_string(blob, &inner) || inner != type) return "the key's data is not of its type";
  return "";
}

}  // namespace

const std::vector<std::string>& ssh_passthrough_names() {
  static const std::vector<std::string> kNames = {"PATH", "LD_LIBRARY_PATH"};
  return kNames;
}

const std::vector<std::string>& ssh_config_names() {
  static const std::vector<std::string> kNames = {"GPUENV_CACHE_ROOT",   "GPUENV_NVML_LIBRARY",
                                                  "GPUENV_CUDA_LIBRARY", "GPUENV_BENCH_PLUGIN",
                                                  "PYTHONUSERBASE",      "PIP_BREAK_SYSTEM_PACKAGES"};
  return kNames;
}

EnvList passthrough_env(const Account& a, const std::function<const char*(const char*)>& get) {
  EnvList out;
  for (const auto& name : ssh_passthrough_names()) {
    const char* value = get(name.c_str());
    if (!value) continue;
    std::string path = user_search_path(value, a);
    if (path.empty() && name == "PATH") path = kUserPath;
    if (!path.empty()) out.emplace_back(name, path);
  }
  for (const auto& name : ssh_config_names())
    if (const char* value = get(name.c_str()); value && *value) out.emplace_back(name, value);
  return out;
}

const std::vector<std::string>& ssh_key_types() {
  static const std::vector<std::string> kTypes = {
      "ssh-ed25519", "sk-ssh-ed25519@openssh.com", "ssh-rsa", "ecdsa-sha2-nistp256",
      "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521", "sk-ecdsa-sha2-nistp256@openssh.com",
      "ssh-ed25519-cert-v01@openssh.com", "sk-ssh-ed25519-cert-v01@openssh.com",
      "ssh-rsa-cert-v01@openssh.com", "ecdsa-sha2-nistp256-cert-v01@openssh.com",
      "ecdsa-sha2-nistp384-cert-v01@openssh.com", "ecdsa-sha2-nistp521-cert-v01@openssh.com",
      "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com"};
  return kTypes;
}

std::string public_key_problem(const std::string& line) {
  for (char c : line)
    if ((static_cast<unsigned char>(c) < ' ' && c != '\t') || c == 0x7f) return "a control character";
  if (line.rfind("-----", 0) == 0) return "a PEM line, as in a private key (pass the .pub file)";
  size_t pos = 0;
  bool has_options = !is_key_type(next_word(line, &pos));
  pos = 0;
  if (has_options && !skip_options(line, &pos)) return "an options field whose quote is not closed";
  return key_problem(line, pos);
}

void add_key_lines(const std::string& text, const std::string& source, KeyLines* out) {
  size_t start = 0;
  for (int number = 1; start < text.size(); ++number) {
    size_t end = std::min(text.find('\n', start), text.size());
    std::string line(trim(std::string_view(text).substr(start, end - start)));
    start = end + 1;
    if (line.empty() || line[0] == '#') continue;
    std::string why = public_key_problem(line);
    if (why.empty()) {
      out->text += line + "\n";
      ++out->keys;
    } else {
      out->rejected.push_back(source + " line " + std::to_string(number) +
                              ": not an OpenSSH public key: " + why);
    }
  }
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
         "MaxAuthTries 3\nPrintMotd no\nAcceptEnv LANG LC_*\nSubsystem sftp internal-sftp\n";
  out += line("KexAlgorithms", kSshKex) + line("Ciphers", kSshCiphers) + line("MACs", kSshMacs);
  out += line("AllowTcpForwarding", c.allow_forwarding ? "local" : "no");
  out += "AllowAgentForwarding no\nAllowStreamLocalForwarding no\nPermitTunnel no\n"
         "GatewayPorts no\nX11Forwarding no\n";
  out += line("AllowUsers", c.user);
  if (c.env.empty()) return out;
  // sshd honours only the first SetEnv line: every variable goes on it.
  std::string args;
  for (const auto& [name, value] : c.env) args += " " + sshd_quote(name + "=" + value);
  return out + "SetEnv" + args + "\n";
}

bool gather_keys(const SshOptions& o, const std::function<const char*(const char*)>& get, KeyLines* keys,
                 std::string* err) {
  if (!o.authorized_keys_file.empty()) {
    std::string text;
    if (!fs::read_file_nofollow(o.authorized_keys_file, kMaxAuthorizedKeysBytes, &text, err)) {
      *err = "--authorized-keys: " + *err;
      return false;
    }
    add_key_lines(text, o.authorized_keys_file, keys);
  }
  if (const char* env = get("GPUENV_SSH_AUTHORIZED_KEYS"))
    add_key_lines(env, "GPUENV_SSH_AUTHORIZED_KEYS", keys);
  report_rejected(keys->rejected);
  if (keys->keys > 0) return true;
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

bool check_sshd(const std::string& sshd, std::string* err) {
  if (!sshd.empty() && sshd[0] == '/' && access(sshd.c_str(), X_OK) == 0) return true;
  *err = "sshd " + sshd + ": " + (sshd.empty() || sshd[0] != '/' ? "must be an absolute path"
                                                                   : std::strerror(errno)) +
         " (install openssh-server, or pass --sshd PATH)";
  return false;
}

int install_sshd(const SshOptions& o, const Account& a, const KeyLines& keys, const Plan& plan, std::string* config,
                 std::string* err) {
  SshPaths p = paths_for(o, a);
  int code = install(o, a, keys, plan, &p, err);
  *config = p.config();
  return code;
}

}  // namespace gpuenv
