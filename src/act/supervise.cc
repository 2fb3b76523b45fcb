#include "act/supervise.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "act/run.h"
#include "sys/subprocess.h"
#include "sys/signals.h"

namespace gpuenv {
namespace {

// What the Supervisor holds blocked and waits for: the forwarded signals
// and SIGCHLD.
std::vector<int> waited_signals() {
  std::vector<int> out = forwarded_signals();
  out.push_back(SIGCHLD);
  return out;
}

sigset_t wait_set() { return sys::signal_set(waited_signals()); }

struct ChildSetup {
  char* const* argv;
  const sigset_t* mask;
  const struct sigaction* ttin;
  const struct sigaction* ttou;
  bool take_terminal;
  int err_fd;  // the exec errno goes here when exec fails
};

// Between fork and exec: async-signal-safe calls only.
[[noreturn]] void exec_child(const ChildSetup& c) {
  setpgid(0, 0);
  if (c.take_terminal) tcsetpgrp(STDIN_FILENO, getpid());  // SIGTTOU is ignored here
  sigaction(SIGTTIN, c.ttin, nullptr);
  sigaction(SIGTTOU, c.ttou, nullptr);
  sigprocmask(SIG_SETMASK, c.mask, nullptr);
  execvp(c.argv[0], c.argv);
  int e = errno;
  ssize_t ignored = write(c.err_fd, &e, sizeof e);
  (void)ignored;
  _exit(sys::exec_status(e));
}

// A SIGPIPE of this process's own write to a closed pipe (the kernel sends
// it as if from this process): not the child's to receive.
bool own_broken_pipe(int sig, const siginfo_t& info) {
  return sig == SIGPIPE && info.si_code == SI_USER && info.si_pid == getpid();
}

// Takes every forwarded signal still pending, so that restoring the mask
// does not end this process by one after the child has ended.
void drain_pending() {
  sigset_t set = wait_set();
  timespec none{0, 0};
  while (sigtimedwait(&set, nullptr, &none) > 0) {
  }
}

// Reaps every exited child; true once `child` is among them.
bool reap(pid_t child, int* status) {
  bool done = false;
  int st = 0;
  pid_t pid;
  while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
    if (pid == child) {
      *status = st;
      done = true;
    }
  return done;
}

// The child's wait status; *stopped once a stop signal was passed on.
int wait_forwarding(pid_t child, bool* stopped) {
  sigset_t set = wait_set();
  int status = 0;
  for (;;) {
    if (reap(child, &status)) return status;
    timespec tick{1, 0};
    siginfo_t info;
    int sig = sigtimedwait(&set, &info, &tick);
    if (sig <= 0 || sig == SIGCHLD || own_broken_pipe(sig, info)) continue;
    sys::forward_signal(child, sig);
    *stopped = *stopped || sys::is_stop_signal(sig);
  }
}

// The exec errno the child sent, or 0 when exec succeeded (pipe closed).
int read_exec_errno(int fd) {
  int e = 0;
  ssize_t n;
  do n = read(fd, &e, sizeof e);
  while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(sizeof e) ? e : 0;
}

ChildExit exit_of(int status) {
  ChildExit out;
  out.started = true;
  if (WIFEXITED(status)) out.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    out.signal = WTERMSIG(status);
    out.code = kExitSignalBase + out.signal;
  }
  return out;
}

ChildExit not_started(const std::string& cmd, int e, std::string* err) {
  ChildExit out;
  out.code = exec_failure(cmd, e, err);  // the same words and codes as `gpuenv run`
  return out;
}

}  // namespace

const std::vector<int>& forwarded_signals() {
  static const std::vector<int> kSignals = {SIGHUP,  SIGINT,  SIGQUIT,  SIGTERM, SIGUSR1,
                                            SIGUSR2, SIGWINCH, SIGALRM, SIGPIPE};
  return kSignals;
}

bool stop_signal_pending() { return sys::signal_pending(sys::stop_signals()); }

SenseGuard::SenseGuard(int limit_ms, std::function<void(int)> on_signal, std::function<void()> on_timeout)
    : on_signal_(std::move(on_signal)), on_timeout_(std::move(on_timeout)) {
  thread_ = std::thread([this, limit_ms] { watch(limit_ms); });
}

SenseGuard::~SenseGuard() {
  done_ = true;
  thread_.join();
}

void SenseGuard::watch(int limit_ms) {
  sigset_t set = sys::signal_set(sys::stop_signals());
  timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  while (!done_) {
    timespec tick{0, 50 * 1000 * 1000};
    siginfo_t info;
    int sig = sigtimedwait(&set, &info, &tick);
    if (sig > 0) return on_signal_(sig);
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long elapsed_ms = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
    if (elapsed_ms >= limit_ms && !done_) return on_timeout_();
  }
}

Supervisor::Supervisor() {
  sys::block_signals(waited_signals(), &old_mask_);
  struct sigaction ignore = {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGTTIN, &ignore, &old_ttin_);
  sigaction(SIGTTOU, &ignore, &old_ttou_);
}

Supervisor::~Supervisor() {
  drain_pending();
  sigaction(SIGTTIN, &old_ttin_, nullptr);
  sigaction(SIGTTOU, &old_ttou_, nullptr);
  sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
}

ChildExit Supervisor::run(const std::vector<std::string>& argv, std::string* err,
                          const std::function<void(pid_t)>& started) {
  if (argv.empty()) return not_started("(no command)", ENOENT, err);
  std::vector<char*> args = sys::c_argv(argv);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return not_started(argv[0], errno, err);
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  bool take_terminal = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
  ChildSetup setup{args.data(), &old_mask_, &old_ttin_, &old_ttou_, take_terminal, fds[1]};
  pid_t pid = fork();
  if (pid == 0) exec_child(setup);
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return not_started(argv[0], errno, err);
  }
  int exec_errno = read_exec_errno(fds[0]);
  close(fds[0]);
  if (exec_errno == 0 && started) started(pid);
  bool stopped = false;
  int status = wait_forwarding(pid, &stopped);
  if (exec_errno != 0) return not_started(argv[0], exec_errno, err);
  ChildExit out = exit_of(status);
  out.stop_forwarded = stopped;
  return out;
}

}  // namespace gpuenv
