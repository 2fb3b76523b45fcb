#include "sense/host/proc_parse.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <map>
#include <optional>

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

TEST(ProcParse, StatSessionAndGroup) {
  ProcStat s;
  std::string err;
  ASSERT_TRUE(parse_proc_stat("77 (python3) S 70 71 60 0 -1 0 0 0 0 0 5 6\n", &s, &err)) << err;
  EXPECT_EQ(s.pgrp, 71);
  EXPECT_EQ(s.session, 60);
  EXPECT_FALSE(parse_proc_stat("77 (python3) S 70 71 x 0 -1 0 0 0 0 0 5 6\n", &s, &err));
}

TEST(ProcParse, Status) {
  ProcStatus s = parse_proc_status(
      "Name:\tpython3\nUmask:\t0022\nState:\tS (sleeping)\nPPid:\t4100\nUid:\t1000\t1001\t1002\t1003\n"
      "Gid:\t100\t100\t100\t100\nCpus_allowed:\tff\nCpus_allowed_list:\t0-7\n");
  EXPECT_EQ(s.uid, 1000u);
  EXPECT_EQ(s.ppid, 4100);
  EXPECT_EQ(s.cpus_allowed_list, "0-7");
  // Broken or absent lines leave theirs unknown; a look-alike key is not one.
  ProcStatus bad = parse_proc_status("Uid:\t-1\t0\nPPid:\tx\nUidX:\t5\nCpus_allowed_listing:\t1\n");
  EXPECT_FALSE(bad.uid);
  EXPECT_FALSE(bad.ppid);
  EXPECT_EQ(bad.cpus_allowed_list, "");
  EXPECT_FALSE(parse_proc_status("").uid);
}

TEST(ProcParse, CgroupLines) {
  struct Row {
    const char* name;
    std::string text;
    std::string path;
    int version;
  };
  const Row rows[] = {
      {"pure v2", "0::/system.slice/slurmstepd.scope/job_1/step_0/user/task_0\n",
       "/system.slice/slurmstepd.scope/job_1/step_0/user/task_0", 2},
      {"v1 cpu,cpuacct", "12:pids:/slurm/uid_1000/job_7\n4:cpu,cpuacct:/slurm/uid_1000/job_7/step_0/task_0\n"
                         "1:name=systemd:/system.slice/slurmd.service\n",
       "/slurm/uid_1000/job_7/step_0/task_0", 1},
      {"v1 cpuacct beats cpu", "5:cpu:/a\n4:cpuacct:/b\n", "/b", 1},
      {"v1 cpu alone", "5:cpu:/a\n1:name=systemd:/s\n", "/a", 1},
      {"hybrid: v1 CPU beats 0::", "4:cpu,cpuacct:/kubepods/pod1/c\n1:name=systemd:/x\n0::/system.slice/x\n",
       "/kubepods/pod1/c", 1},
      {"hybrid without a CPU controller: 0::", "3:memory:/m\n1:name=systemd:/s\n0::/u\n", "/u", 2},
      {"name=systemd last", "3:memory:/m\n1:name=systemd:/s\n", "/s", 1},
      {"a path holding ':'", "0::/a:b:c\n", "/a:b:c", 2},
      {"the first 0:: line wins (a name with a newline)", "0::/user/x\n0::/slurmstepd.scope/job_9\n", "/user/x", 2},
      {"garbage", "hello\n::\n0:\n0::relative\n\n", "", 0},
      {"empty", "", "", 0},
  };
  for (const Row& r : rows) {
    ProcCgroup cg = parse_proc_cgroup(r.text);
    EXPECT_EQ(cg.path, r.path) << r.name;
    EXPECT_EQ(cg.version, r.version) << r.name;
  }
}

TEST(ProcParse, AttributionEnvKeepsOnlyItsNames) {
  using namespace std::string_literals;
  std::string text = "PATH=/bin\0SLURM_JOB_ID=1234\0HOME=/root\0SLURM_JOB_ID=999\0GPUENV_JOB_ID=\0"
                   "HOSTNAME=pod-a\0SECRET_TOKEN=x\0SLURM_JOB_IDX=5\0=odd\0noequals\0"s;
  std::map<std::string, std::string> want = {
      {"SLURM_JOB_ID", "1234"}, {"GPUENV_JOB_ID", ""}, {"HOSTNAME", "pod-a"}};
  EXPECT_EQ(parse_attribution_env(text), want);
  EXPECT_EQ(parse_attribution_env(std::string("HOSTNAME=") + std::string(1000, 'a')).at("HOSTNAME").size(),
            kMaxEnvValueBytes);
  EXPECT_TRUE(parse_attribution_env("").empty());
}

TEST(ProcParse, CpuLists) {
  const std::pair<const char*, std::optional<int>> rows[] = {
      {"0-3,8,10-11", 7}, {"0\n", 1}, {"0-127", 128}, {"5-5", 1},     {"", std::nullopt},
      {"\n", std::nullopt}, {"3-1", std::nullopt}, {"0-", std::nullopt}, {"a", std::nullopt},
      {"0,,1", std::nullopt}, {"0-1048576", std::nullopt}, {"-1", std::nullopt}, {"0-31:2", std::nullopt},
  };
  for (const auto& [text, want] : rows) EXPECT_EQ(cpu_list_count(text), want) << text;
}

TEST(ProcParse, CgroupValues) {
  EXPECT_EQ(parse_cpu_max("200000 100000\n"), 2.0);
  EXPECT_EQ(parse_cpu_max("50000 100000"), 0.5);
  EXPECT_FALSE(parse_cpu_max("max 100000\n"));
  EXPECT_FALSE(parse_cpu_max("100 0"));
  EXPECT_FALSE(parse_cpu_max("100"));
  EXPECT_EQ(keyed_value("usage_usec 123456\nuser_usec 100\n", "usage_usec"), 123456u);
  EXPECT_EQ(keyed_value("user_usec 100\nusage_usec 7\n", "usage_usec"), 7u);
  EXPECT_FALSE(keyed_value("usage_usec x\n", "usage_usec"));
  EXPECT_FALSE(keyed_value("usage_usecs 5\n", "usage_usec"));
  EXPECT_EQ(single_integer("-1\n"), -1);
  EXPECT_EQ(single_integer("123456789012\n"), 123456789012);
  EXPECT_FALSE(single_integer("12 13"));
  EXPECT_FALSE(single_integer(""));
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
