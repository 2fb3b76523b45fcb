#include "act/serve/serve_jupyter.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "act/init.h"
#include "act/log.h"
#include "act/run.h"
#include "act/serve/serve_common.h"
#include "sys/fs.h"
#include "sys/text.h"

namespace gpuenv {
namespace {

// Best effort: a read-only mount keeps its mode.
void tighten(const std::string& path) {
  struct stat st;
  std::string ignored;
  int fd = fs::open_regular_nofollow(path, &st, &ignored);
  if (fd < 0) return;
  if ((st.st_mode & 07777) != 0600) fchmod(fd, 0600);
  close(fd);
}

bool use_file_token(const std::string& path, std::string* token, std::string* err) {
  std::string raw;
  if (!fs::read_file_nofollow(path, kMaxTokenFileBytes, &raw, err)) return false;
  *token = trim(raw);
  if (!check_token(*token, path, err)) return false;
  tighten(path);
  if (raw == *token) return true;
  // Jupyter reads the file verbatim: rewrite it without the newline.
  return write_file_atomic(path, *token, 0600, err);
}

bool new_token_file(const std::string& path, std::string* token, std::string* err) {
  return generate_token(token, err) && sys::make_dirs(fs::dirname(path), 0700, err) &&
         sys::create_exclusive(path, *token, 0600, err);
}

// GPUENV_JUPYTER_TOKEN, else Jupyter's own JUPYTER_TOKEN.
std::string token_from_env() {
  for (const char* name : {"GPUENV_JUPYTER_TOKEN", "JUPYTER_TOKEN"})
    if (const char* v = std::getenv(name); v && *v) return v;
  return "";
}

void print_url(const std::string& program, const JupyterOptions& o, const std::string& file,
               const std::string& token, TokenSource source) {
  std::string url = jupyter_url(program, o);
  nlohmann::ordered_json f = {{"url", url}, {"token_file", file}};
  if (source == TokenSource::kGenerated) {
    f["token"] = token;  // shown only now, in either format
    log_event({Severity::kInfo, "jupyter",
               "gpuenv: Jupyter token generated and stored in " + file + " (0600); shown only now:\n" +
                   "gpuenv:   " + url + "?token=" + token + "\n",
               f, LogEvent::Form::kVerbatim});
    return;
  }
  log_message(Severity::kInfo, "jupyter",
              "Jupyter at " + url + "; the token is in " + file +
                  (source == TokenSource::kEnv ? " (from the environment)" : ""),
              f);
}

// As root: become the account (unless it is root, allowed explicitly).
bool become(const Account& a, std::string* err) {
  if (geteuid() != 0 || a.uid == 0) return true;
  return drop_privileges(a, err);
}

bool check_root_dir(const std::string& dir, std::string* err) {
  if (access(dir.c_str(), R_OK | X_OK) == 0) return true;
  *err = "--root-dir " + dir + ": " + std::strerror(errno);
  return false;
}

}  // namespace

const std::vector<std::string>& jupyter_programs() {
  static const std::vector<std::string> kPrograms = {"jupyter-lab", "jupyter-server",
                                                     "jupyter-notebook"};
  return kPrograms;
}

std::vector<std::string> jupyter_argv(const std::string& program, const JupyterOptions& o,
                                      bool as_root) {
  std::vector<std::string> argv = {program,
                                   "--no-browser",
                                   "--ip=" + o.ip,
                                   "--port=" + std::to_string(o.port),
                                   "--port-retries=0",
                                   "--notebook-dir=" + o.root_dir};
  if (as_root) argv.push_back("--allow-root");
  return argv;
}

std::string jupyter_url(const std::string& program, const JupyterOptions& o) {
  std::string host = o.ip;
  if (host.empty() || host == "0.0.0.0" || host == "::" || host == "*") host = "127.0.0.1";
  else if (host.find(':') != std::string::npos) host = "[" + host + "]";
  std::string name = fs::basename(program);
  std::string path = name == "jupyter-lab" ? "/lab" : name == "jupyter-notebook" ? "/tree" : "/";
  return "http://" + host + ":" + std::to_string(o.port) + path;
}

bool generate_token(std::string* out, std::string* err) {
  unsigned char bytes[16];
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  bool ok = fd >= 0 && read(fd, bytes, sizeof bytes) == static_cast<ssize_t>(sizeof bytes);
  if (!ok) *err = std::string("reading /dev/urandom: ") + std::strerror(errno);
  if (fd >= 0) close(fd);
  if (!ok) return false;
  static const char kHex[] = "0123456789abcdef";
  out->clear();
  for (unsigned char b : bytes) {
    out->push_back(kHex[b >> 4]);
    out->push_back(kHex[b & 15]);
  }
  return true;
}

bool valid_token(const std::string& token) {
  if (token.empty()) return false;
  for (char c : token)
    if (c <= ' ' || c > '~') return false;
  return true;
}

bool check_token(const std::string& token, const std::string& where, std::string* err) {
  if (!valid_token(token))
    *err = where + ": expected one token (printable ASCII characters, no spaces)";
  else if (token.size() < kMinTokenChars)
    *err = where + ": the token is " + std::to_string(token.size()) + " characters long; it needs " +
           "at least " + std::to_string(kMinTokenChars) + " (about 128 bits when random), because " +
           "anyone who can reach the port can try to guess it. Make one with `openssl rand -hex 32`, " +
           "or set none and let gpuenv generate one";
  else
    return true;
  return false;
}

bool ensure_token_file(const std::string& path, const std::string& env_token, std::string* token,
                       TokenSource* source, std::string* err) {
  if (!env_token.empty()) {
    *token = env_token;
    *source = TokenSource::kEnv;
    return check_token(env_token, "GPUENV_JUPYTER_TOKEN (or JUPYTER_TOKEN)", err) &&
           sys::make_dirs(fs::dirname(path), 0700, err) && write_file_atomic(path, env_token, 0600, err);
  }
  struct stat st;
  if (lstat(path.c_str(), &st) == 0) {
    *source = TokenSource::kFile;
    return use_file_token(path, token, err);
  }
  *source = TokenSource::kGenerated;
  return new_token_file(path, token, err);
}

int serve_jupyter(const JupyterOptions& o, const std::function<int(Plan*)>& make_plan,
                  std::string* err) {
  Account account;
  if (!choose_account(o.user, o.allow_root, &account, err)) {
    *err = "refusing to start Jupyter: " + *err +
           (geteuid() == 0 ? " (Jupyter runs as root only with --allow-root)" : "");
    return kExitServeConfig;
  }
  std::string program = find_on_path(jupyter_programs());
  if (program.empty()) {
    *err = "no Jupyter found on PATH (jupyter-lab, jupyter-server or jupyter-notebook): "
           "pip install jupyterlab, or apt-get install jupyter-server";
    return kExitCommandNotFound;
  }
  std::string given = token_from_env();
  if (!become(account, err) || !check_root_dir(o.root_dir, err)) return kExitServeConfig;
  Plan plan;
  if (int code = make_plan(&plan)) return code;
  std::string file = o.token_file.empty() ? account.home + "/.local/share/gpuenv/jupyter_token"
                                          : o.token_file;
  std::string token;
  TokenSource source;
  if (!ensure_token_file(file, given, &token, &source, err)) return kExitServeConfig;
  apply_settings(plan);
  setenv("JUPYTER_TOKEN_FILE", file.c_str(), 1);
  unsetenv("JUPYTER_TOKEN");
  unsetenv("GPUENV_JUPYTER_TOKEN");
  print_url(program, o, file, token, source);
  return exec_program(jupyter_argv(program, o, account.uid == 0), err);
}

}  // namespace gpuenv
