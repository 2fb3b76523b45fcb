#include "sys/signals.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

namespace gpuenv::sys {
namespace {

// Restores this thread's signal mask when the test ends.
class ScopedMask {
 public:
  ScopedMask() { pthread_sigmask(SIG_BLOCK, nullptr, &old_); }
  ~ScopedMask() {
    sigset_t set = signal_set({SIGUSR1, SIGUSR2});
    timespec none{0, 0};
    while (sigtimedwait(&set, nullptr, &none) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t old_;
};

bool blocked(int sig) {
  sigset_t now;
  pthread_sigmask(SIG_BLOCK, nullptr, &now);
  return sigismember(&now, sig) == 1;
}

TEST(Signals, TheStopSignalsAreTheFourThatAskForAnEnd) {
  EXPECT_EQ(stop_signals(), (std::vector<int>{SIGTERM, SIGINT, SIGHUP, SIGQUIT}));
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) EXPECT_TRUE(is_stop_signal(sig)) << sig;
  for (int sig : {SIGUSR1, SIGCHLD, SIGWINCH, SIGPIPE, SIGKILL, 0}) EXPECT_FALSE(is_stop_signal(sig)) << sig;
}

TEST(Signals, SignalSetHoldsExactlyTheGivenSignals) {
  sigset_t set = signal_set({SIGUSR1, SIGCHLD});
  EXPECT_EQ(sigismember(&set, SIGUSR1), 1);
  EXPECT_EQ(sigismember(&set, SIGCHLD), 1);
  EXPECT_EQ(sigismember(&set, SIGUSR2), 0);
  sigset_t none = signal_set({});
  EXPECT_EQ(sigismember(&none, SIGTERM), 0);
}

TEST(Signals, BlockAndUnblockChangeOnlyTheGivenSignals) {
  ScopedMask restore;
  sigset_t old;
  block_signals({SIGUSR1}, &old);
  EXPECT_EQ(sigismember(&old, SIGUSR1), 0);
  EXPECT_TRUE(blocked(SIGUSR1));
  EXPECT_FALSE(blocked(SIGUSR2));
  unblock_signals({SIGUSR1});
  EXPECT_FALSE(blocked(SIGUSR1));
}

TEST(Signals, APendingBlockedSignalIsSeen) {
  ScopedMask restore;
  block_signals({SIGUSR1, SIGUSR2});
  EXPECT_FALSE(signal_pending({SIGUSR1}));
  pthread_kill(pthread_self(), SIGUSR1);
  EXPECT_TRUE(signal_pending({SIGUSR1}));
  EXPECT_TRUE(signal_pending({SIGUSR2, SIGUSR1}));
  EXPECT_FALSE(signal_pending({SIGUSR2}));
}

TEST(Signals, ForwardingAStopSignalWakesAStoppedChild) {
  pid_t child = fork();
  if (child == 0) {
    signal(SIGTERM, [](int) { _exit(42); });
    raise(SIGSTOP);  // stopped: only SIGCONT lets it take the SIGTERM
    for (;;) pause();
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, WUNTRACED), child);
  ASSERT_TRUE(WIFSTOPPED(status));
  forward_signal(child, SIGTERM);
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 42);
}

TEST(Signals, SignalNames) {
  EXPECT_EQ(signal_name(SIGTERM), "SIGTERM");
  EXPECT_EQ(signal_name(SIGINT), "SIGINT");
  EXPECT_EQ(signal_name(1000), "signal 1000");
}

}  // namespace
}  // namespace gpuenv::sys
