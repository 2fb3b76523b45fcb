#include "act/serve/serve_jupyter.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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

std::string jupyter_token_from_env(const std::function<const char*(const char*)>& get) {
  for (const char* name : {"GPUENV_JUPYTER_TOKEN", "JUPYTER_TOKEN"})
    if (const char* v = get(name); v && *v) return v;
  return "";
}

void say_jupyter_url(const std::string& program, const JupyterOptions& o, const std::string& file,
                     const std::string& token, TokenSource source, const MessageSink& log,
                     const std::function<void(const LogEvent&)>& log_event) {
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
  log(Severity::kInfo, "jupyter",
      "Jupyter at " + url + "; the token is in " + file + (source == TokenSource::kEnv ? " (from the environment)" : ""),
      f);
}

bool become_service_user(const Account& a, std::string* err) {
  if (geteuid() != 0 || a.uid == 0) return true;
  return drop_privileges(a, err);
}

bool check_root_dir(const std::string& dir, std::string* err) {
  if (access(dir.c_str(), R_OK | X_OK) == 0) return true;
  *err = "--root-dir " + dir + ": " + std::strerror(errno);
  return false;
}

}  // namespace gpuenv
