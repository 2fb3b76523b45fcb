#include "act/supervise.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "container_support.h"
#include "wait_until.h"

namespace gpuenv {
namespace {

ChildExit run(const std::vector<std::string>& argv, std::string* err) {
  Supervisor s;
  return s.run(argv, err);
}

TEST(Supervise, ReturnsTheExitCode) {
  std::string err;
  ChildExit e = run({"sh", "-c", "exit 7"}, &err);
  EXPECT_TRUE(e.started);
  EXPECT_EQ(e.code, 7);
  EXPECT_EQ(e.signal, 0);
  EXPECT_EQ(err, "");
}

TEST(Supervise, DeathBySignalIs128PlusTheSignal) {
  std::string err;
  ChildExit e = run({"sh", "-c", "kill -KILL $$"}, &err);
  EXPECT_TRUE(e.started);
  EXPECT_EQ(e.code, 128 + SIGKILL);
  EXPECT_EQ(e.signal, SIGKILL);
}

TEST(Supervise, NotFoundIs127NotExecutableIs126) {
  std::string err;
  ChildExit e = run({"gpuenv-no-such-command"}, &err);
  EXPECT_FALSE(e.started);
  EXPECT_EQ(e.code, 127);
  EXPECT_NE(err.find("cannot run gpuenv-no-such-command"), std::string::npos) << err;
  testing::ScratchDir dir;
  e = run({dir.file("not-executable", "#!/bin/sh\n")}, &err);
  EXPECT_FALSE(e.started);
  EXPECT_EQ(e.code, 126);
}

TEST(Supervise, ForwardsASignalSentToThisProcess) {
  std::string err;
  Supervisor s;  // first, so that the sender thread starts with SIGUSR1 blocked too
  testing::ScratchDir dir;
  std::string ready = dir.path() + "/ready";
  std::thread sender([ready] {
    testing::wait_until([&] { return access(ready.c_str(), F_OK) == 0; });  // the trap is set
    kill(getpid(), SIGUSR1);  // process-directed: the supervisor takes it and forwards it
  });
  ChildExit e = s.run({"sh", "-c", "trap 'exit 9' USR1; : > \"$0\"; while :; do sleep 0.05; done",
                       ready},
                      &err);
  sender.join();
  EXPECT_EQ(e.code, 9) << err;
}

// issue 21, 13: SIGALRM and SIGPIPE ended gpuenv (142, 141) and orphaned the job.
TEST(Supervise, ForwardsSigalrmAndSigpipe) {
  for (const char* sig : {"SIGALRM", "SIGPIPE"}) {
    std::string err;
    // The child signals this process, which forwards it back. Python, not sh:
    // a shell cannot trap a signal ignored on entry (tests ignore SIGPIPE).
    std::string script = std::string("import os, signal, time\nsignal.signal(signal.") + sig +
                         ", lambda *a: os._exit(9))\nos.kill(os.getppid(), signal." + sig + ")\ntime.sleep(20)";
    ChildExit e = run({"python3", "-c", script}, &err);
    EXPECT_EQ(e.code, 9) << sig << " " << err;
  }
}

TEST(Supervise, ASignalAfterTheChildEndedDoesNotEndThisProcess) {
  std::string err;
  {
    Supervisor s;
    EXPECT_EQ(s.run({"true"}, &err).code, 0);
    kill(getpid(), SIGTERM);  // held, as while gpuenv run records the job
    EXPECT_TRUE(stop_signal_pending());
  }
  EXPECT_FALSE(stop_signal_pending());  // dropped, not delivered: this test is still running
}

TEST(Supervise, TheChildGetsItsOwnProcessGroupAndAnEmptyMask) {
  std::string err;
  ChildExit e = run({"sh", "-c", "[ \"$(cut -d' ' -f5 /proc/$$/stat)\" = \"$$\" ]"}, &err);
  EXPECT_EQ(e.code, 0) << "the child's pgid is its pid " << err;
  // grep, exec'd directly, reads the mask it was started with (a shell would
  // show its own, which it changes around each fork).
  e = run({"grep", "-q", "^SigBlk:[[:space:]]*0*$", "/proc/self/status"}, &err);
  EXPECT_EQ(e.code, 0) << "no signal blocked in the child " << err;
}

TEST(Supervise, RestoresTheSignalMask) {
  sigset_t before, after;
  sigprocmask(SIG_BLOCK, nullptr, &before);
  {
    Supervisor s;
  }
  sigprocmask(SIG_BLOCK, nullptr, &after);
  for (int sig : forwarded_signals()) EXPECT_EQ(sigismember(&before, sig), sigismember(&after, sig));
}

}  // namespace
}  // namespace gpuenv
