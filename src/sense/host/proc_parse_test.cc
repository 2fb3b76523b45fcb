#include "sense/host/proc_parse.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>

#include "sys/fs.h"
#include "sense/host/proc_tree.h"
#include "wait_until.h"

namespace gpuenv {
namespace {

TEST(ProcParse, StatWithAnAwkwardComm) {
  ProcStat s;
  std::string err;
  // A comm may hold spaces and ')': the last ')' ends it.
  ASSERT_TRUE(parse_proc_stat("4242 (pt_data (worker) 0) S 4100 4100 1 0 -1 4194560 10 0 0 0 731 45 0 0 20 0 9 0\n",
                              &s, &err))
      << err;
  EXPECT_EQ(s.pid, 4242);
  EXPECT_EQ(s.comm, "pt_data (worker) 0");
  EXPECT_EQ(s.state, 'S');
  EXPECT_EQ(s.ppid, 4100);
  EXPECT_EQ(s.utime, 731u);
  EXPECT_EQ(s.stime, 45u);
}

TEST(ProcParse, StatRejectsWhatIsNotOne) {
  ProcStat s;
  std::string err;
  for (const char* bad : {"", "12 S 1 1", "x (a) S 1 1 1 0 -1 0 0 0 0 0 1 1", "12 (a) S 1 1 1 0 -1 0 0 0 0 0 1",
                          "12 (a) SS 1 1 1 0 -1 0 0 0 0 0 1 1", "12 (a) S -3 1 1 0 -1 0 0 0 0 0 1 1",
                          "12 (a) S 1 1 1 0 -1 0 0 0 0 0 x 1", ")12 (", "-5 (a) S 1 1 1 0 -1 0 0 0 0 0 1 1"}) {
    err.clear();
    EXPECT_FALSE(parse_proc_stat(bad, &s, &err)) << bad;
    EXPECT_FALSE(err.empty()) << bad;
  }
}

TEST(ProcParse, PidLists) {
  EXPECT_EQ(parse_pid_list("12 345 \n"), (std::vector<int>{12, 345}));
  EXPECT_EQ(parse_pid_list(""), std::vector<int>{});
  EXPECT_EQ(parse_pid_list("0 -1 x 99999999 7"), std::vector<int>{7});
}

// This process's own children, read live: a child appears, and its CPU use
// is counted once it has used some.
TEST(ProcTree, SeesChildrenAndTheirCpu) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    for (;;) asm volatile("");
  }
  // Readings 0.3 s apart until one finds the child has used some CPU (a
  // loaded machine may give it little at first).
  CpuMeter meter;
  meter.read(process_tree(getpid()), 0.1);
  auto last = std::chrono::steady_clock::now();
  std::vector<ProcStat> tree;
  TreeCpu cpu;
  testing::wait_until(
      [&] {
        if (std::chrono::steady_clock::now() - last < std::chrono::milliseconds(300)) return false;
        tree = process_tree(getpid());
        auto now = std::chrono::steady_clock::now();
        cpu = meter.read(tree, std::chrono::duration<double>(now - last).count());
        last = now;
        return cpu.top_cores > 0.05;
      },
      testing::kEventBound, std::chrono::milliseconds(50));
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  bool found = false;
  for (const auto& p : tree) found |= p.pid == child;
  EXPECT_TRUE(found);
  EXPECT_GE(cpu.processes, 1);
  EXPECT_GT(cpu.top_cores, 0.05);
  EXPECT_LE(cpu.top_cores, 1.5);
}

// The /proc scan used where task/*/children is missing finds the same tree.
TEST(ProcTree, ScansAFakeProcWithoutChildrenFiles) {
  char tmpl[] = "/tmp/gpuenv-proc-XXXXXX";
  std::string proc = mkdtemp(tmpl);
  auto add = [&](int pid, int ppid, const char* comm, int utime) {
    std::string dir = proc + "/" + std::to_string(pid);
    mkdir(dir.c_str(), 0755);
    mkdir((dir + "/task").c_str(), 0755);
    mkdir((dir + "/task/" + std::to_string(pid)).c_str(), 0755);
    FILE* f = fopen((dir + "/stat").c_str(), "w");
    fprintf(f, "%d (%s) R %d 1 1 0 -1 0 0 0 0 0 %d 0 0 0 20 0 1 0\n", pid, comm, ppid, utime);
    fclose(f);
  };
  add(100, 1, "gpuenv", 1);
  add(101, 100, "python3", 50);
  add(102, 101, "python3", 20);
  add(103, 1, "other", 5);
  std::vector<ProcStat> tree = process_tree(100, proc);
  ASSERT_EQ(tree.size(), 2u);
  EXPECT_EQ(tree[0].pid, 101);
  EXPECT_EQ(tree[1].pid, 102);
}

}  // namespace
}  // namespace gpuenv
