#include "container_support.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "process.h"
#include "test_paths.h"
#include "text_files.h"

namespace gpuenv::testing {
namespace {

void sleep_ms(int ms) { usleep(static_cast<useconds_t>(ms) * 1000); }

using testing::slurp;

std::vector<std::string> clean_env(const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> env;
  for (const char* keep : {"PATH", "HOME", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"})
    if (const char* v = getenv(keep)) env[keep] = v;
  env["NO_COLOR"] = "1";
  env["GPUENV_NVML_LIBRARY"] = "/nonexistent/libnvidia-ml.so.1";
  env["GPUENV_CUDA_LIBRARY"] = "/nonexistent/libcuda.so.1";
  for (const auto& [k, v] : extra) env[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Resets the signals the test runner may ignore, so traps work in children.
void default_signals(posix_spawnattr_t* attr) {
  sigset_t def, none;
  sigemptyset(&def);
  for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) sigaddset(&def, s);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(attr, &def);
  posix_spawnattr_setsigmask(attr, &none);
  posix_spawnattr_setpgroup(attr, 0);
  posix_spawnattr_setflags(attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
                                     POSIX_SPAWN_SETSIGMASK);
}

void descendants(pid_t pid, std::vector<pid_t>* out) {
  for (pid_t c : children_of(pid)) {
    out->push_back(c);
    descendants(c, out);
  }
}

void signal_groups(const std::vector<pid_t>& pids, int sig) {
  for (pid_t p : pids) {
    pid_t group = getpgid(p);
    if (group > 1 && group != getpgrp()) kill(-group, sig);
    kill(p, sig);
  }
}

// The pids of the Background programs still running: never reaped by mistake.
std::set<pid_t>& live_programs() {
  static std::set<pid_t> live;
  return live;
}

pid_t parent_of(pid_t pid) {
  std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = stat.rfind(')');
  return paren == std::string::npos ? 0 : std::atoi(stat.c_str() + paren + 4);
}

// Reaps this process's zombie children that no running Background owns.
void reap_strays() {
  for (;;) {
    siginfo_t info{};
    if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) return;
    if (live_programs().count(info.si_pid)) return;
    waitpid(info.si_pid, nullptr, 0);
  }
}

// Waits (up to 2 s) until no process of `group` is left that this process
// must reap: the ones orphaned when their parent died come here, as this
// process is a child subreaper.
void reap_orphans(const std::vector<pid_t>& group) {
  for (int waited = 0; waited < 2000; waited += 10) {
    reap_strays();
    bool pending = false;
    for (pid_t p : group) {
      char state = process_state(p);
      pending = pending || (state != 0 && (state != 'Z' || parent_of(p) == getpid()));
    }
    if (!pending) return;
    sleep_ms(10);
  }
}

bool run_ok(std::vector<std::string> argv) {
  std::string sbin = "/usr/sbin/" + argv[0];  // useradd, userdel: PATH may lack sbin
  if (access(sbin.c_str(), X_OK) == 0) argv[0] = sbin;
  return run_process(argv, {{}, "", 30000}).exit_code == 0;
}

}  // namespace

Background::Background(const std::vector<std::string>& argv,
                       const std::map<std::string, std::string>& env) {
  char tmpl[] = "/tmp/gpuenv-bg-XXXXXX";
  int log_fd = mkstemp(tmpl);
  if (log_fd < 0) throw std::runtime_error("mkstemp failed");
  log_path_ = tmpl;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, log_fd, 1);
  posix_spawn_file_actions_adddup2(&fa, log_fd, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  default_signals(&attr);
  prctl(PR_SET_CHILD_SUBREAPER, 1);  // orphans come here, to be reaped (see reap_orphans)
  std::vector<std::string> args = argv, envs = clean_env(env);
  std::vector<char*> cargs = c_strings(args), cenv = c_strings(envs);
  int rc = posix_spawnp(&pid_, cargs[0], &fa, &attr, cargs.data(), cenv.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(log_fd);
  if (rc != 0) throw std::runtime_error(std::string("posix_spawnp: ") + strerror(rc));
  live_programs().insert(pid_);
}

Background::~Background() {
  stop();
  unlink(log_path_.c_str());
}

std::string Background::log() const { return slurp(log_path_); }

bool Background::wait_for_log(const std::string& text, int timeout_ms) {
  for (int waited = 0; waited < timeout_ms; waited += 20) {
    if (log().find(text) != std::string::npos) return true;
    siginfo_t info{};
    if (reaped_ || (waitid(P_PID, pid_, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid_))
      break;
    sleep_ms(20);
  }
  return log().find(text) != std::string::npos;
}

bool Background::wait_exit(int timeout_ms, int* exit_code) {
  for (int waited = 0; waited <= timeout_ms; waited += 10) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      reaped_ = true;
      live_programs().erase(pid_);
      *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return true;
    }
    sleep_ms(10);
  }
  return false;
}

void Background::stop() {
  if (reaped_ || pid_ <= 0) return;
  std::vector<pid_t> all = {pid_};
  descendants(pid_, &all);
  signal_groups(all, SIGTERM);
  int code;
  if (!wait_exit(3000, &code)) {
    descendants(pid_, &all);
    signal_groups(all, SIGKILL);
    waitpid(pid_, nullptr, 0);
    reaped_ = true;
    live_programs().erase(pid_);
  }
  std::vector<pid_t> rest(all.begin() + 1, all.end());
  signal_groups(rest, SIGKILL);
  reap_orphans(rest);
}

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

namespace {

int connect_loopback(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) return fd;
  close(fd);
  return -1;
}

}  // namespace

bool wait_for_port(int port, int timeout_ms) {
  for (int waited = 0; waited < timeout_ms; waited += 50) {
    int fd = connect_loopback(port);
    if (fd >= 0) {
      close(fd);
      return true;
    }
    sleep_ms(50);
  }
  return false;
}

int http_get_status(int port, const std::string& path, const std::vector<std::string>& headers) {
  int fd = connect_loopback(port);
  if (fd < 0) return -1;
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string req = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\n";
  for (const auto& h : headers) req += h + "\r\n";
  req += "Connection: close\r\n\r\n";
  std::string resp;
  if (send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
    char buf[1024];
    ssize_t n;
    while (resp.find("\r\n") == std::string::npos && (n = recv(fd, buf, sizeof buf, 0)) > 0)
      resp.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  int status = -1;
  if (resp.rfind("HTTP/1.", 0) == 0 && resp.size() > 12) status = std::atoi(resp.c_str() + 9);
  return status;
}

std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::istringstream in(slurp(dir + "/" + e->d_name + "/children"));
    pid_t c;
    while (in >> c) out.push_back(c);
  }
  closedir(d);
  return out;
}

char process_state(pid_t pid) {
  std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() ? 0 : stat[paren + 2];
}

std::vector<uid_t> process_uids(pid_t pid) {
  std::istringstream in(slurp("/proc/" + std::to_string(pid) + "/status"));
  std::string line;
  std::vector<uid_t> out;
  while (std::getline(in, line)) {
    if (line.rfind("Uid:", 0) != 0) continue;
    std::istringstream fields(line.substr(4));
    uid_t u;
    while (fields >> u) out.push_back(u);
  }
  return out;
}

TestUser::TestUser(const std::string& name, bool locked) {
  if (geteuid() != 0) {
    passwd* pw = getpwuid(geteuid());
    name_ = pw ? pw->pw_name : "";
    home_ = pw ? pw->pw_dir : "";
    uid_ = geteuid();
    if (!pw) error_ = "the current uid has no passwd entry";
    return;
  }
  name_ = name;
  if (getpwnam(name.c_str())) run_ok({"userdel", "--remove", name});  // left by a crashed run
  std::vector<std::string> add = {"useradd", "--create-home", "--shell", "/bin/sh",
                                  "--password",  locked ? "!" : "*", name};
  for (int attempt = 0; attempt < 20 && !created_; ++attempt) {  // another test may hold the lock
    created_ = run_ok(add);
    if (!created_) sleep_ms(250);
  }
  passwd* pw = created_ ? getpwnam(name.c_str()) : nullptr;
  if (!pw) {
    error_ = "useradd " + name + " failed";
    return;
  }
  uid_ = pw->pw_uid;
  home_ = pw->pw_dir;
}

TestUser::~TestUser() {
  for (int attempt = 0; attempt < 20 && created_; ++attempt) {
    if (run_ok({"userdel", "--remove", name_}) || !getpwnam(name_.c_str())) break;
    sleep_ms(250);
  }
}

SecureTempDir::SecureTempDir() {
  const char* home = getenv("HOME");
  std::string base = geteuid() == 0 ? "/run" : std::string(home ? home : "/tmp");
  std::string tmpl = base + "/gpuenv-test-XXXXXX";
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp " + tmpl + ": " + strerror(errno));
  chmod(tmpl.c_str(), 0755);
  path_ = tmpl;
}

SecureTempDir::~SecureTempDir() { run_ok({"rm", "-rf", path_}); }

ScratchDir::ScratchDir() {
  char tmpl[] = "/tmp/gpuenv-scratch-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error(std::string("mkdtemp: ") + strerror(errno));
  path_ = tmpl;
}

ScratchDir::~ScratchDir() { run_ok({"rm", "-rf", path_}); }

std::string ScratchDir::file(const std::string& name, const std::string& content) const {
  std::string p = path_ + "/" + name;
  std::ofstream(p, std::ios::binary) << content;
  return p;
}

std::string tests_dir() { return test_paths::tests_dir(); }

}  // namespace gpuenv::testing
