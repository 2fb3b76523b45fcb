#include "process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <nlohmann/json.hpp>

#include "test_paths.h"

namespace gpuenv::testing {
namespace {

long long now_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

std::vector<std::string> base_env(const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> env;
  for (const char* keep : {"PATH", "HOME", "TMPDIR", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"})
    if (const char* v = getenv(keep)) env[keep] = v;
  env["NO_COLOR"] = "1";
  for (const auto& [k, v] : extra) env[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

void pump(int fds[2], std::string* bufs[2], int in_fd, const std::string& input, pid_t pid,
          int timeout_ms) {
  size_t written = 0;
  long long deadline = now_ms() + timeout_ms;
  bool open_[2] = {true, true};
  while (open_[0] || open_[1] || in_fd >= 0) {
    pollfd p[3];
    int n = 0, idx[3];
    for (int i = 0; i < 2; ++i)
      if (open_[i]) { p[n] = {fds[i], POLLIN, 0}; idx[n++] = i; }
    if (in_fd >= 0) { p[n] = {in_fd, POLLOUT, 0}; idx[n++] = 2; }
    long long left = deadline - now_ms();
    if (left <= 0) { kill(pid, SIGKILL); break; }
    if (poll(p, n, static_cast<int>(left)) < 0) break;
    for (int k = 0; k < n; ++k) {
      if (!p[k].revents) continue;
      if (idx[k] == 2) {
        ssize_t w = write(in_fd, input.data() + written, input.size() - written);
        if (w > 0) written += w;
        if (w <= 0 || written == input.size()) { close(in_fd); in_fd = -1; }
        continue;
      }
      char buf[4096];
      ssize_t r = read(fds[idx[k]], buf, sizeof buf);
      if (r > 0) bufs[idx[k]]->append(buf, r);
      else open_[idx[k]] = false;
    }
  }
  if (in_fd >= 0) close(in_fd);
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& opts) {
  int out[2], err[2], in[2];
  if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) || pipe2(in, O_CLOEXEC))
    throw std::runtime_error("pipe2 failed");
  signal(SIGPIPE, SIG_IGN);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  std::vector<std::string> env = base_env(opts.env);
  std::vector<char*> cargv, cenv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const auto& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawnp(&pid, cargv[0], &fa, nullptr, cargv.data(), cenv.data());
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  ProcessResult r;
  if (rc != 0) {
    close(in[1]); close(out[0]); close(err[0]);
    r.err = std::string("posix_spawnp: ") + strerror(rc);
    return r;
  }
  int fds[2] = {out[0], err[0]};
  std::string* bufs[2] = {&r.out, &r.err};
  pump(fds, bufs, opts.stdin_data.empty() ? (close(in[1]), -1) : in[1], opts.stdin_data, pid,
       opts.timeout_ms);
  close(out[0]);
  close(err[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.term_signal = WTERMSIG(status);
  return r;
}

ProcessResult run_gpuenv(const std::vector<std::string>& args, ProcessOptions opts) {
  std::vector<std::string> argv = {test_paths::gpuenv_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  opts.env.emplace("GPUENV_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
  opts.env.emplace("GPUENV_CUDA_LIBRARY", "/nonexistent/libcuda.so.1");
  opts.env.emplace("GPUENV_DCGM_LIBRARY", "/nonexistent/libdcgm.so.4");  // a real DCGM stays out of the tests
  opts.env.emplace("GPUENV_WATCH", "0");  // a test that runs a job under watch says so (no store under $HOME)
  return run_process(argv, opts);
}

std::map<std::string, std::string> stand_in_env(const std::string& scenario) {
  return {{"GPUENV_NVML_LIBRARY", (test_paths::fake_dir() + "/libnvidia-ml.so.1")},
          {"GPUENV_CUDA_LIBRARY", (test_paths::fake_dir() + "/libcuda.so.1")},
          {"GPUENV_DCGM_LIBRARY", "/nonexistent/libdcgm.so.4"},  // the stand-in DCGM when a test asks for it
          {"FAKE_NVML_SCENARIO", kScenarios + scenario + ".txt"},
          {"FAKE_CUDA_SCENARIO", kScenarios + scenario + ".txt"}};
}

ProcessOptions stand_ins(const std::string& scenario) {
  ProcessOptions o;
  o.env = stand_in_env(scenario);
  return o;
}

namespace {

// The directories write_temp_file made, removed when the test process exits
// (each test is its own process under ctest); a forked child that exits
// leaves them to its parent.
struct TempDirs {
  pid_t owner = getpid();
  std::vector<std::string> dirs;
  ~TempDirs() {
    if (getpid() != owner) return;
    std::error_code ec;
    for (const auto& d : dirs) std::filesystem::remove_all(d, ec);
  }
};

TempDirs& temp_dirs() {
  static TempDirs dirs;
  return dirs;
}

}  // namespace

std::string make_temp_dir(const std::string& prefix, mode_t mode) {
  std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  temp_dirs().dirs.push_back(tmpl);
  chmod(tmpl.c_str(), mode);
  return tmpl;
}

std::string write_temp_file(const std::string& name, const std::string& content) {
  std::string path = make_temp_dir("gpuenv-test", 0700) + "/" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

HttpReply curl_http(const std::vector<std::string>& args, int timeout_ms) {
  std::vector<std::string> argv = {"curl", "-sS", "-D", "-"};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessResult r = run_process(argv, {{}, "", timeout_ms});
  HttpReply h;
  h.curl_exit = r.exit_code;
  std::size_t split = r.out.find("\r\n\r\n");
  if (r.exit_code != 0 || split == std::string::npos) return h;
  h.headers = r.out.substr(0, split);
  h.body = r.out.substr(split + 4);
  h.status = std::atoi(h.headers.c_str() + h.headers.find(' ') + 1);
  return h;
}

int series_count(int port, const std::string& query) {
  ProcessResult r = run_process({"curl", "-sS", "-G", "--data-urlencode", "query=" + query,
                                 "http://127.0.0.1:" + std::to_string(port) + "/api/v1/query"},
                                {{}, "", 10000});
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  if (r.exit_code != 0 || j.is_discarded() || j.value("status", "") != "success") return -1;
  return static_cast<int>(j["data"]["result"].size());
}

}  // namespace gpuenv::testing
