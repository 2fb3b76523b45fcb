#include "sense/capture.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sys/fs.h"
#include "sys/subprocess.h"

namespace gpuenv {
namespace {

long now_ms() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

// The child's status; it is killed when it is still there at the deadline
// (it closed its stdout but did not exit).
int reap(pid_t pid, long deadline) {
  int status = 0;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return status;
    if (r == 0 && now_ms() >= deadline) kill(pid, SIGKILL);
    if (r == 0) usleep(2000);
  }
}

// Reads until EOF, the deadline or the size limit; "" when all went well.
std::string drain(int fd, const CaptureLimits& limits, long deadline, std::string* out) {
  char buf[8192];
  for (;;) {
    long left = deadline - now_ms();
    if (left <= 0) return "no answer within " + std::to_string(limits.timeout_ms) + " ms";
    pollfd p{fd, POLLIN, 0};
    int n = poll(&p, 1, static_cast<int>(left));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fs::errno_text("poll");
    if (n == 0) continue;
    ssize_t got = read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return fs::errno_text("read");
    if (got == 0) return "";
    out->append(buf, static_cast<std::size_t>(got));
    if (out->size() > limits.max_bytes) return "more than " + std::to_string(limits.max_bytes) + " bytes of output";
  }
}

}  // namespace

bool capture_output(const std::vector<std::string>& argv, const CaptureLimits& limits, std::string* out,
                    std::string* err) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return *err = fs::errno_text("pipe"), false;
  sys::SpawnIo io;
  io.null_stdin = true, io.stdout_fd = fds[1], io.null_stderr = true;
  pid_t pid = 0;
  bool started = sys::spawn(argv, io, &pid, err);
  close(fds[1]);
  if (!started) return close(fds[0]), false;
  long deadline = now_ms() + limits.timeout_ms;
  std::string why = drain(fds[0], limits, deadline, out);
  close(fds[0]);
  if (!why.empty()) kill(pid, SIGKILL);
  int status = reap(pid, deadline);
  if (why.empty() && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && now_ms() >= deadline)
    why = "no answer within " + std::to_string(limits.timeout_ms) + " ms";
  if (!why.empty()) return *err = argv[0] + ": " + why, false;
  if (sys::exited_ok(status)) return true;
  *err = argv[0] + " " + sys::exit_text(status);
  return false;
}

}  // namespace gpuenv
