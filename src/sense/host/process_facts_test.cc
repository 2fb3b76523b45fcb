#include "sense/host/process_facts.h"

#include <pwd.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace gpuenv {
namespace {

namespace stdfs = std::filesystem;
using namespace std::string_literals;

// A process for FakeHost: what its /proc directory says.
struct Proc {
  int pid = 0, ppid = 1, session = 0;
  std::string comm = "python3";
  std::optional<std::uint32_t> uid = 0;
  std::string cgroup = "";   // /proc/PID/cgroup's text
  std::string environ = "";  // /proc/PID/environ's bytes
  int utime = 0, stime = 0;
  std::string cpus = "0-7";
};

// A /proc and a cgroup tree in a temporary directory, removed when the test ends.
class FakeHost {
 public:
  FakeHost() {
    std::string tmpl = (stdfs::temp_directory_path() / "gpuenv_facts_XXXXXX").string();
    root_ = mkdtemp(tmpl.data());
  }
  ~FakeHost() { stdfs::remove_all(root_); }
  ProcessReadOptions options() const { return {root_ + "/proc", root_ + "/cgroup"}; }
  std::string path(const std::string& p) const { return root_ + p; }

  void file(const std::string& p, const std::string& text) {
    stdfs::create_directories(stdfs::path(root_ + p).parent_path());
    std::ofstream(root_ + p, std::ios::binary) << text;
  }
  void dir(const std::string& p) { stdfs::create_directories(root_ + p); }

  // Only /proc/PID/stat: enough for a tree walk and a CPU reading.
  void stat(const Proc& p) {
    std::string d = "/proc/" + std::to_string(p.pid);
    file(d + "/stat", std::to_string(p.pid) + " (" + p.comm + ") S " + std::to_string(p.ppid) + " " +
                          std::to_string(p.session) + " " + std::to_string(p.session) + " 0 -1 0 0 0 0 0 " +
                          std::to_string(p.utime) + " " + std::to_string(p.stime) + " 0 0 20 0 1 0 100\n");
    dir(d + "/task/" + std::to_string(p.pid));
  }
  void process(const Proc& p) {
    std::string d = "/proc/" + std::to_string(p.pid);
    stat(p);
    file(d + "/comm", p.comm + "\n");
    std::string status = "Name:\t" + p.comm + "\nPPid:\t" + std::to_string(p.ppid) + "\n";
    if (p.uid) status += "Uid:\t" + std::to_string(*p.uid) + "\t0\t0\t0\n";
    file(d + "/status", status + "Cpus_allowed_list:\t" + p.cpus + "\n");
    file(d + "/cgroup", p.cgroup);
    file(d + "/environ", p.environ);
  }
  void children(int pid, const std::string& list) {
    file("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children", list);
  }

  ProcessFacts facts(std::uint32_t pid) const { return read_process_facts({pid}, options()).at(0); }

 private:
  std::string root_;
};

std::string user_name(std::uint32_t uid) {
  struct passwd* pw = getpwuid(uid);
  return pw ? pw->pw_name : "";
}

// A uid without a name on this machine.
std::uint32_t nameless_uid() {
  std::uint32_t uid = 3999999;
  while (getpwuid(uid)) ++uid;
  return uid;
}

double ticks(int n) { return double(n) / double(sysconf(_SC_CLK_TCK)); }

std::vector<std::uint32_t> pids_of(const JobCpuReading& r) {
  std::vector<std::uint32_t> out;
  for (const auto& p : r.process_cpu_s) out.push_back(p.first);
  std::sort(out.begin(), out.end());
  return out;
}

// sshd (50) -> bash, the session's leader (100) -> torchrun (200) -> python3 (300).
void login_session(FakeHost* h, std::uint32_t uid) {
  h->process({.pid = 50, .ppid = 1, .session = 50, .comm = "sshd"});
  h->process({.pid = 100, .ppid = 50, .session = 100, .comm = "bash", .uid = uid});
  h->process({.pid = 200, .ppid = 100, .session = 100, .comm = "torchrun", .uid = uid});
}

TEST(ProcessFacts, ReadsAProcess) {
  FakeHost h;
  login_session(&h, 0);
  std::uint32_t nobody = nameless_uid();
  h.process({.pid = 300,
             .ppid = 200,
             .session = 100,
             .uid = nobody,
             .cgroup = "0::/system.slice/slurmstepd.scope/job_1234/step_0/user/task_0\n",
             .environ = "PATH=/bin\0SLURM_JOB_ID=1234\0AWS_SECRET=x\0SLURM_STEP_ID=0\0"s});
  ProcessFacts f = h.facts(300);
  ProcessFacts want;
  want.pid = 300, want.found = true, want.uid = nobody, want.user = "";
  want.cgroup = "/system.slice/slurmstepd.scope/job_1234/step_0/user/task_0", want.cgroup_version = 2;
  want.env = {{"SLURM_JOB_ID", "1234"}, {"SLURM_STEP_ID", "0"}};
  want.root_pid = 200, want.root_command = "torchrun", want.root_uid = 0u, want.root_user = user_name(0);
  EXPECT_EQ(f, want);
}

TEST(ProcessFacts, KeepsTheOrderAndEachPid) {
  FakeHost h;
  login_session(&h, 0);
  std::vector<ProcessFacts> f = read_process_facts({200, 999, 100}, h.options());
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].pid, 200u);
  EXPECT_EQ(f[1].pid, 999u);
  EXPECT_EQ(f[2].pid, 100u);
  EXPECT_TRUE(f[0].found && !f[1].found && f[2].found);
  EXPECT_EQ(f[0].user, user_name(0));
}

TEST(ProcessFacts, TreeRoots) {
  struct Row {
    const char* name;
    std::vector<Proc> procs;
    std::uint32_t pid, root;
  };
  const Row rows[] = {
      {"below the session leader", {{.pid = 100, .ppid = 50, .session = 100}, {.pid = 200, .ppid = 100, .session = 100},
                                    {.pid = 300, .ppid = 200, .session = 100}}, 300, 200},
      {"it leads its session", {{.pid = 100, .ppid = 50, .session = 100}}, 100, 100},
      {"its parent is PID 1", {{.pid = 1, .ppid = 0, .session = 1}, {.pid = 700, .ppid = 1, .session = 5},
                               {.pid = 701, .ppid = 700, .session = 5}}, 701, 700},
      {"its parent is in another session", {{.pid = 400, .ppid = 1, .session = 400},
                                            {.pid = 401, .ppid = 400, .session = 400},
                                            {.pid = 500, .ppid = 401, .session = 450}}, 500, 500},
      {"its parent is gone", {{.pid = 800, .ppid = 799, .session = 5}}, 800, 800},
      {"gpuenv run's child", {{.pid = 100, .ppid = 50, .session = 100, .comm = "bash"},
                              {.pid = 150, .ppid = 100, .session = 100, .comm = "gpuenv"},
                              {.pid = 160, .ppid = 150, .session = 100, .comm = "torchrun"},
                              {.pid = 170, .ppid = 160, .session = 100}}, 170, 160},
      {"gpuenv run leading its session", {{.pid = 150, .ppid = 1, .session = 150, .comm = "gpuenv"},
                                          {.pid = 160, .ppid = 150, .session = 150}}, 160, 160},
      {"its own parent", {{.pid = 600, .ppid = 600, .session = 5}}, 600, 600},
  };
  for (const Row& r : rows) {
    FakeHost h;
    for (const Proc& p : r.procs) h.process(p);
    EXPECT_EQ(h.facts(r.pid).root_pid, r.root) << r.name;
  }
}

TEST(ProcessFacts, AMissingProcessIsNotFound) {
  FakeHost h;
  h.dir("/proc");
  for (std::uint32_t pid : {0u, 42u, 1u << 22, 4294967295u}) {
    ProcessFacts want;
    want.pid = pid;
    EXPECT_EQ(h.facts(pid), want) << pid;
  }
}

TEST(ProcessFacts, MissingFilesLeaveTheirFactsUnknown) {
  FakeHost h;
  h.dir("/proc/42");
  ProcessFacts want;
  want.pid = 42, want.found = true;
  EXPECT_EQ(h.facts(42), want);
}

// Hostile trees: every reading ends, soon, with what could be read.
TEST(ProcessFacts, ADeepChainStopsAtTheAncestorLimit) {
  FakeHost h;
  for (int pid = 1000; pid <= 2000; ++pid) h.stat({.pid = pid, .ppid = pid - 1, .session = 5});
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(h.facts(2000).root_pid, 2000u - kMaxAncestors);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(ProcessFacts, AParentLoopEnds) {
  FakeHost h;
  h.stat({.pid = 500, .ppid = 502, .session = 9});
  h.stat({.pid = 501, .ppid = 500, .session = 9});
  h.stat({.pid = 502, .ppid = 501, .session = 9});
  std::uint32_t root = h.facts(500).root_pid;
  EXPECT_TRUE(root == 500 || root == 501 || root == 502) << root;
}

TEST(ProcessFacts, HugeFilesAreReadOnlyToTheirCap) {
  FakeHost h;
  std::string junk(4 << 20, 'a');
  h.process({.pid = 300, .ppid = 1, .session = 300, .cgroup = "0::/ok\n" + junk,
             .environ = "SLURM_JOB_ID=77\0"s + junk + "\0GPUENV_JOB_ID=late\0"s});
  h.file("/proc/300/status", "Uid:\t5\t5\t5\t5\n" + junk);
  ProcessFacts f = h.facts(300);
  EXPECT_EQ(f.cgroup, "/ok");
  EXPECT_EQ(f.env, (std::map<std::string, std::string>{{"SLURM_JOB_ID", "77"}}));
  EXPECT_EQ(f.uid, 5u);
  // A file with no line end within the cap gives nothing, never half a line.
  h.file("/proc/300/cgroup", "0::/" + junk);
  h.file("/proc/300/stat", "300 (" + junk + ") S 1 300 300 0 -1 0 0 0 0 0 1 1\n");
  f = h.facts(300);
  EXPECT_EQ(f.cgroup, "");
  EXPECT_EQ(f.cgroup_version, 0);
  EXPECT_EQ(f.root_pid, 0u);
}

TEST(ProcessFacts, OddBytesAreKeptAsTheyAre) {
  FakeHost h;
  std::string odd = "\xff\x1b[2J\xc3";
  h.process({.pid = 300, .ppid = 1, .session = 300, .comm = odd, .cgroup = "0::/a" + odd + "\n",
             .environ = "HOSTNAME=" + odd + "\0"s});
  ProcessFacts f = h.facts(300);
  EXPECT_EQ(f.root_command, odd);
  EXPECT_EQ(f.cgroup, "/a" + odd);
  EXPECT_EQ(f.env.at("HOSTNAME"), odd);
}

TEST(ProcessFacts, AFifoIsNotRead) {
  FakeHost h;
  h.process({.pid = 300, .ppid = 1, .session = 300});
  stdfs::remove(h.path("/proc/300/environ"));
  ASSERT_EQ(mkfifo(h.path("/proc/300/environ").c_str(), 0600), 0);
  EXPECT_TRUE(h.facts(300).env.empty());
}

// --- a job's CPU ---

// A Slurm job under cgroup v2: job_1234 with a step's task and the extern step.
void slurm_v2_job(FakeHost* h) {
  h->file("/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
  h->file("/cgroup/cpuset.cpus.effective", "0-63\n");
  std::string job = "/cgroup/system.slice/slurmstepd.scope/job_1234";
  h->file(job + "/cpu.stat", "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n");
  h->file(job + "/cpu.max", "max 100000\n");
  h->file(job + "/cpuset.cpus.effective", "0-3,8\n");
  h->file(job + "/cgroup.procs", "");
  h->file(job + "/step_0/user/task_0/cgroup.procs", "300\n301\n");
  h->file(job + "/step_extern/slurm_processes/cgroup.procs", "310\n");
  h->stat({.pid = 300, .ppid = 1, .session = 300, .utime = 100, .stime = 20});
  h->stat({.pid = 301, .ppid = 300, .session = 300, .utime = 50});
  h->stat({.pid = 310, .ppid = 1, .session = 310, .utime = 1});
}

JobOwner cgroup_owner(const std::string& cgroup) {
  JobOwner o;
  o.cgroup = cgroup;
  return o;
}

TEST(ProcessFacts, JobCpuUnderCgroupV2) {
  FakeHost h;
  slurm_v2_job(&h);
  JobCpuReading r = read_job_cpu(cgroup_owner("/system.slice/slurmstepd.scope/job_1234"), h.options());
  EXPECT_EQ(r.usage_s, 2.5);
  EXPECT_EQ(r.cores_allowed, 5.0);
  EXPECT_EQ(pids_of(r), (std::vector<std::uint32_t>{300, 301, 310}));
  for (const auto& [pid, s] : r.process_cpu_s) EXPECT_DOUBLE_EQ(s, ticks(pid == 300 ? 120 : pid == 301 ? 50 : 1));
}

TEST(ProcessFacts, JobCoresAreTheTightestLimit) {
  struct Row {
    const char* name;
    std::vector<std::pair<std::string, std::string>> files;  // under .../job_1234
    std::optional<double> cores;
  };
  const Row rows[] = {
      {"the cpuset", {}, 5.0},
      {"a quota below the cpuset", {{"/cpu.max", "150000 100000\n"}}, 1.5},
      {"a quota above the cpuset", {{"/cpu.max", "800000 100000\n"}}, 5.0},
      {"a quota above the job", {{"/../cpu.max", "200000 100000\n"}}, 2.0},
      {"no cpuset here: the nearest above", {{"/cpuset.cpus.effective", ""}}, 64.0},
      {"a broken cpu.max is no limit", {{"/cpu.max", "lots\n"}}, 5.0},
  };
  for (const Row& r : rows) {
    FakeHost h;
    slurm_v2_job(&h);
    for (const auto& [file, text] : r.files)
      h.file(stdfs::path("/cgroup/system.slice/slurmstepd.scope/job_1234" + file).lexically_normal().string(), text);
    JobCpuReading got = read_job_cpu(cgroup_owner("/system.slice/slurmstepd.scope/job_1234/"), h.options());
    EXPECT_EQ(got.cores_allowed, r.cores) << r.name;
  }
}

TEST(ProcessFacts, JobCpuUnderCgroupV1Layouts) {
  struct Row {
    const char* name;
    const char* cpuacct;  // where cpuacct.usage and cgroup.procs are
    const char* cpu;      // where the CFS quota is
    const char* quota;
    std::optional<double> cores;
  };
  const Row rows[] = {
      {"cpu,cpuacct together", "cpu,cpuacct", "cpu,cpuacct", "200000", 2.0},
      {"cpuacct and cpu apart", "cpuacct", "cpu", "50000", 0.5},
      {"no quota: the cpuset", "cpu,cpuacct", "cpu,cpuacct", "-1", 6.0},
  };
  for (const Row& r : rows) {
    FakeHost h;
    std::string job = "/slurm/uid_1000/job_7";
    h.file("/cgroup/"s + r.cpuacct + job + "/cpuacct.usage", "3000000000\n");
    h.file("/cgroup/"s + r.cpuacct + job + "/step_0/task_0/cgroup.procs", "300\n");
    h.file("/cgroup/"s + r.cpu + job + "/cpu.cfs_quota_us", std::string(r.quota) + "\n");
    h.file("/cgroup/"s + r.cpu + job + "/cpu.cfs_period_us", "100000\n");
    h.file("/cgroup/cpuset" + job + "/cpuset.cpus", "0-5\n");
    h.stat({.pid = 300, .ppid = 1, .session = 300, .utime = 10, .stime = 10});
    JobCpuReading got = read_job_cpu(cgroup_owner(job), h.options());
    EXPECT_EQ(got.usage_s, 3.0) << r.name;
    EXPECT_EQ(got.cores_allowed, r.cores) << r.name;
    EXPECT_EQ(pids_of(got), std::vector<std::uint32_t>{300}) << r.name;
  }
}

TEST(ProcessFacts, JobCpuOfAProcessTree) {
  FakeHost h;
  h.process({.pid = 200, .ppid = 100, .session = 100, .utime = 10, .cpus = "0-15"});
  h.process({.pid = 300, .ppid = 200, .session = 100, .utime = 30, .stime = 5});
  h.process({.pid = 301, .ppid = 300, .session = 100, .utime = 5});
  h.process({.pid = 999, .ppid = 1, .session = 999, .utime = 1000});
  h.children(200, "300 ");
  h.children(300, "301 ");
  h.children(301, "");
  h.children(999, "");
  JobOwner o;
  o.scheduler = "none", o.root_pid = 200;
  JobCpuReading r = read_job_cpu(o, h.options());
  EXPECT_EQ(pids_of(r), (std::vector<std::uint32_t>{200, 300, 301}));
  ASSERT_TRUE(r.usage_s);
  EXPECT_DOUBLE_EQ(*r.usage_s, ticks(50));
  EXPECT_EQ(r.cores_allowed, 16.0);
  o.root_pid = 12345;  // gone
  EXPECT_EQ(read_job_cpu(o, h.options()), JobCpuReading{});
}

TEST(ProcessFacts, JobCpuUnknownWhereNothingTells) {
  FakeHost h;
  slurm_v2_job(&h);
  for (const char* cgroup : {"/system.slice/slurmstepd.scope/job_9", "/system.slice/../system.slice/slurmstepd.scope",
                             "/../etc", "relative/path", "/./x"})
    EXPECT_EQ(read_job_cpu(cgroup_owner(cgroup), h.options()), JobCpuReading{}) << cgroup;
  EXPECT_EQ(read_job_cpu(JobOwner{}, h.options()), JobCpuReading{});
}

TEST(ProcessFacts, JobCpuOfAHostileCgroupTreeIsBounded) {
  FakeHost h;
  h.file("/cgroup/cgroup.controllers", "cpu\n");
  std::string deep = "/job";
  for (int i = 0; i < 100; ++i) {
    h.file("/cgroup" + deep + "/cgroup.procs", std::to_string(1000 + i) + "\n");
    h.stat({.pid = 1000 + i, .ppid = 1, .session = 1000 + i});
    deep += "/d";
  }
  JobCpuReading r = read_job_cpu(cgroup_owner("/job"), h.options());
  EXPECT_EQ(r.process_cpu_s.size(), 33u);  // the cgroup and 32 levels under it

  std::string many;
  for (int pid = 2; pid < 5002; ++pid) many += std::to_string(pid) + "\n";
  h.file("/cgroup/wide/cgroup.procs", many);
  for (int pid = 2; pid < 5002; ++pid) h.file("/proc/" + std::to_string(pid) + "/stat",
                                              std::to_string(pid) + " (x) S 1 1 1 0 -1 0 0 0 0 0 1 1\n");
  r = read_job_cpu(cgroup_owner("/wide"), h.options());
  EXPECT_EQ(r.process_cpu_s.size(), kMaxJobProcesses);
}

// --- dcgm-exporter's job mapping ---

TEST(ProcessFacts, HpcJobMapping) {
  FakeHost h;
  h.file("/map/0", "1234\n\n  1235 \r\n");
  h.file("/map/1", "77");
  h.file("/map/01", "x\n");
  h.file("/map/notes", "x\n");
  h.file("/map/12", "");
  h.dir("/map/2");
  ASSERT_EQ(mkfifo(h.path("/map/3").c_str(), 0600), 0);
  std::string big;
  while (big.size() < (200 << 10)) big += "123456789\n";
  h.file("/map/4", big);
  HpcJobMap map;
  std::string err;
  ASSERT_TRUE(read_hpc_job_mapping(h.path("/map"), &map, &err)) << err;
  EXPECT_EQ(map.at("0"), (std::vector<std::string>{"1234", "1235"}));
  EXPECT_EQ(map.at("1"), std::vector<std::string>{"77"});
  EXPECT_EQ(map.at("12"), std::vector<std::string>{});
  ASSERT_TRUE(map.count("4"));
  EXPECT_EQ(map.at("4").size(), (64u << 10) / 10);  // the first 64 KiB, whole lines only
  EXPECT_EQ(map.size(), 4u);

  EXPECT_FALSE(read_hpc_job_mapping(h.path("/absent"), &map, &err));
  EXPECT_NE(err.find(h.path("/absent")), std::string::npos) << err;
}

TEST(ProcessFacts, HpcJobMappingReadsAtMost256Files) {
  FakeHost h;
  for (int gpu = 0; gpu < 300; ++gpu) h.file("/map/" + std::to_string(gpu), "1\n");
  HpcJobMap map;
  std::string err;
  ASSERT_TRUE(read_hpc_job_mapping(h.path("/map"), &map, &err)) << err;
  EXPECT_EQ(map.size(), 256u);
}

}  // namespace
}  // namespace gpuenv

namespace gpuenv {
namespace {

// --- ProcessReader: what it reads again each round, and what it remembers ---

Proc slurm_task(int pid, int utime) {
  return {.pid = pid, .ppid = 1, .session = pid, .uid = 0,
          .cgroup = "0::/system.slice/slurmstepd.scope/job_1234/step_0/user/task_0\n", .utime = utime};
}

// A process's facts are read once while it lives: a change to them is seen
// at the next refresh, or at once when the PID is another process (a new
// start time); its CPU is read every round.
TEST(ProcessReader, RemembersAProcessWhileItLives) {
  FakeHost h;
  slurm_v2_job(&h);
  h.process(slurm_task(300, 100));
  ProcessReader reader(h.options());
  EXPECT_EQ(reader.facts({300}).at(0).cgroup, "/system.slice/slurmstepd.scope/job_1234/step_0/user/task_0");
  h.file("/proc/300/cgroup", "0::/elsewhere\n");
  EXPECT_EQ(reader.facts({300}).at(0).cgroup, "/system.slice/slurmstepd.scope/job_1234/step_0/user/task_0")
      << "the same process: remembered";
  for (int i = 2; i < ProcessReader::kRefreshRounds; ++i) reader.facts({300});
  EXPECT_EQ(reader.facts({300}).at(0).cgroup, "/elsewhere") << "read again at the refresh";

  ProcessReader fresh(h.options());
  fresh.facts({300});
  h.file("/proc/300/cgroup", "0::/another\n");
  h.file("/proc/300/stat", "300 (python3) S 1 300 300 0 -1 0 0 0 0 0 5 0 0 0 20 0 1 0 999\n");  // started again
  EXPECT_EQ(fresh.facts({300}).at(0).cgroup, "/another") << "a new process under the same PID";
  h.file("/proc/300/stat", "");
  stdfs::remove_all(h.path("/proc/300"));
  EXPECT_FALSE(fresh.facts({300}).at(0).found) << "a process that ended is gone, not remembered";
}

// A job's usage and its processes' CPU are read every round; its cores
// allowed and the cgroups under it once per refresh.
TEST(ProcessReader, ReadsAJobsCpuEveryRoundAndItsLimitsOnce) {
  FakeHost h;
  slurm_v2_job(&h);
  std::string job = "/system.slice/slurmstepd.scope/job_1234";
  ProcessReader reader(h.options());
  reader.facts({300, 301});
  JobCpuReading first = reader.job_cpu(cgroup_owner(job));
  EXPECT_EQ(first.usage_s, 2.5);
  EXPECT_EQ(first.cores_allowed, 5.0);
  EXPECT_EQ(pids_of(first), (std::vector<std::uint32_t>{300, 301, 310}));

  h.file("/cgroup" + job + "/cpu.stat", "usage_usec 4500000\n");
  h.file("/cgroup" + job + "/cpuset.cpus.effective", "0-1\n");
  h.stat({.pid = 300, .ppid = 1, .session = 300, .utime = 300});
  h.file("/cgroup" + job + "/step_1/user/task_0/cgroup.procs", "320\n");
  h.stat({.pid = 320, .ppid = 1, .session = 320, .utime = 7});
  reader.facts({300, 301});
  JobCpuReading second = reader.job_cpu(cgroup_owner(job));
  EXPECT_EQ(second.usage_s, 4.5) << "read every round";
  EXPECT_EQ(second.cores_allowed, 5.0) << "remembered until the refresh";
  for (const auto& [pid, cpu] : second.process_cpu_s)
    if (pid == 300) {
      EXPECT_DOUBLE_EQ(cpu, ticks(300)) << "read every round";
    }
  EXPECT_EQ(pids_of(second), (std::vector<std::uint32_t>{300, 301, 310})) << "the new step counts from the refresh";

  for (int i = 2; i < ProcessReader::kRefreshRounds; ++i) reader.facts({300, 301});
  reader.facts({300, 301});
  JobCpuReading refreshed = reader.job_cpu(cgroup_owner(job));
  EXPECT_EQ(refreshed.cores_allowed, 2.0);
  EXPECT_EQ(pids_of(refreshed), (std::vector<std::uint32_t>{300, 301, 310, 320}));
}

}  // namespace
}  // namespace gpuenv
