#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "sense/host/host_parse.h"
#include "sense/sense.h"

namespace gpuenv {
namespace {

namespace stdfs = std::filesystem;

// A directory tree standing in for "/", removed when the test ends.
class FakeTree {
 public:
  FakeTree() {
    std::string tmpl = (stdfs::temp_directory_path() / "gpuenv_host_XXXXXX").string();
    root_ = mkdtemp(tmpl.data());
  }
  ~FakeTree() { stdfs::remove_all(root_); }
  const std::string& root() const { return root_; }

  void file(const std::string& path, const std::string& text = "") {
    stdfs::create_directories(stdfs::path(root_ + path).parent_path());
    std::ofstream(root_ + path, std::ios::binary) << text;
  }
  void dir(const std::string& path) { stdfs::create_directories(root_ + path); }
  void link(const std::string& target, const std::string& path) {
    stdfs::create_directories(stdfs::path(root_ + path).parent_path());
    stdfs::create_directory_symlink(target, root_ + path);
  }

  Host sense() const {
    SenseOptions opts;
    opts.root = root_;
    Host host;
    sense_host(opts, &host);
    return host;
  }

 private:
  std::string root_;
};

std::string codes(const std::vector<Problem>& problems) {
  std::string out;
  for (const Problem& p : problems) out += p.code + " (" + p.message + ")\n";
  return out;
}

// A /proc/<pid>/environ: NUL-terminated NAME=value entries.
std::string environ_file(std::initializer_list<std::string> vars) {
  std::string out;
  for (const std::string& v : vars) out += v + '\0';
  return out;
}

std::vector<int> cpu_range(int lo, int hi) {
  std::vector<int> v;
  for (int c = lo; c <= hi; ++c) v.push_back(c);
  return v;
}

void net(FakeTree& t, const std::string& name, const std::string& operstate,
         const std::string& type, const std::string& flags, bool physical) {
  std::string dir = "/sys/class/net/" + name;
  t.file(dir + "/operstate", operstate + "\n");
  t.file(dir + "/type", type + "\n");
  t.file(dir + "/flags", flags + "\n");
  if (physical) t.link("../../../devices/pci0000:00/0000:00:03.0", dir + "/device");
}

// Docker (--network=host, default 64 MiB /dev/shm) on cgroup v2 with its
// own cgroup namespace, 8 of 16 CPUs, 1.5 CPUs of quota, 8 GiB of memory.
void docker_v2(FakeTree& t) {
  t.file("/.dockerenv");
  t.file("/proc/sys/kernel/hostname", "train-7f9c\n");
  t.file("/sys/class/dmi/id/product_name", "PowerEdge R750xa  \n");
  t.file("/proc/self/environ", environ_file({"PATH=/usr/bin", "HOME=/root"}));
  t.file("/sys/devices/system/cpu/online", "0-15\n");
  t.file("/proc/self/status", "Name:\tgpuenv\nCpus_allowed:\tff\nCpus_allowed_list:\t0-7\n");
  t.file("/proc/self/cgroup", "0::/\n");
  t.file("/proc/self/mountinfo",
         "1040 1011 0:212 / / rw,relatime master:570 - overlay overlay rw,lowerdir="
         "/var/lib/docker/overlay2/l/ABC,upperdir=/var/lib/docker/overlay2/1/diff\n"
         "1041 1040 0:215 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n"
         "1042 1040 0:216 / /dev rw,nosuid - tmpfs tmpfs rw,size=65536k,mode=755\n"
         "1045 1040 0:219 / /sys ro,nosuid,nodev,noexec,relatime - sysfs sysfs ro\n"
         "1046 1045 0:30 / /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw,nsdelegate\n"
         "1044 1042 0:218 / /dev/shm rw,nosuid,nodev,noexec - tmpfs shm rw,size=65536k\n");
  t.file("/sys/fs/cgroup/cpu.max", "150000 100000\n");
  t.file("/sys/fs/cgroup/memory.max", "8589934592\n");
  t.file("/proc/meminfo", "MemTotal:       65759332 kB\nMemFree:        1000 kB\n");
  t.file("/sys/devices/system/node/online", "0-1\n");
  t.file("/sys/devices/system/node/node0/cpulist", "0-7\n");
  t.file("/sys/devices/system/node/node0/meminfo", "Node 0 MemTotal:       32879616 kB\n");
  t.file("/sys/devices/system/node/node1/cpulist", "8-15\n");
  t.file("/sys/devices/system/node/node1/meminfo", "Node 1 MemTotal:       32879716 kB\n");
  for (std::string d : {"nvidia0", "nvidia1", "nvidia10", "nvidia2", "nvidiactl",
                        "nvidia-uvm", "nvidia-uvm-tools", "null", "shm/x"})
    t.file("/dev/" + d);
  t.file("/sys/class/infiniband/mlx5_0/ports/1/link_layer", "Ethernet\n");
  t.file("/sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
  t.dir("/sys/devices/pci0000:00/0000:00:03.0");
  net(t, "lo", "unknown", "772", "0x9", false);
  net(t, "eth0", "up", "1", "0x1003", true);
  net(t, "docker0", "down", "1", "0x1003", false);
  t.file("/sys/class/net/bonding_masters", "\n");
}

TEST(HostSense, DockerCgroupV2) {
  FakeTree t;
  docker_v2(t);
  Host h = t.sense();
  EXPECT_EQ(codes(h.problems), "");
  EXPECT_EQ(h.hostname, "train-7f9c");
  EXPECT_EQ(h.product_name, "PowerEdge R750xa");
  EXPECT_EQ(h.online_cpus, 16);
  EXPECT_EQ(h.affinity_cpus, cpu_range(0, 7));
  EXPECT_EQ(h.cgroup_cpu_quota, 1.5);
  EXPECT_EQ(h.usable_cpus, 2);
  EXPECT_EQ(h.memory_total_bytes, 65759332ull * 1024);
  EXPECT_EQ(h.cgroup_memory_limit_bytes, 8589934592ull);
  EXPECT_EQ(h.numa_nodes, (std::vector<NumaNode>{{0, cpu_range(0, 7), 32879616ull * 1024},
                                                 {1, cpu_range(8, 15), 32879716ull * 1024}}));
  EXPECT_EQ(h.shm_bytes, 64ull << 20);
  EXPECT_EQ(h.container, "docker");
  EXPECT_EQ(h.nvidia_device_nodes,
            (std::vector<std::string>{"/dev/nvidia-uvm", "/dev/nvidia-uvm-tools",
                                      "/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia2",
                                      "/dev/nvidia10", "/dev/nvidiactl"}));
  EXPECT_EQ(h.ib_devices, (std::vector<IbDevice>{{"mlx5_0", "Ethernet", "4: ACTIVE"}}));
  EXPECT_EQ(h.interfaces, (std::vector<NetInterface>{{"docker0", false, false, true},
                                                     {"eth0", true, false, false},
                                                     {"lo", true, true, true}}));
}

// Kubernetes on cgroup v1 without a cgroup namespace: the memory hierarchy
// is mounted at its root, so the limit is found on the pod, two levels up.
void kubernetes_v1(FakeTree& t) {
  const std::string pod = "/kubepods/burstable/pod1234";
  t.file("/proc/sys/kernel/hostname", "trainer-0\n");
  t.file("/proc/self/environ",
         environ_file({"KUBERNETES_SERVICE_HOST=10.96.0.1", "HOME=/"}));
  t.file("/sys/devices/system/cpu/online", "0-31\n");
  t.file("/proc/self/status", "Cpus_allowed_list:\t0-31\n");
  t.file("/proc/self/cgroup", "12:memory:" + pod + "/abcd\n6:cpu,cpuacct:" + pod +
                                  "/abcd\n1:name=systemd:" + pod + "/abcd\n");
  t.file("/proc/self/mountinfo",
         "20 1 0:40 / / rw - overlay overlay rw,lowerdir=/var/lib/containerd/a\n"
         "21 20 0:41 / /dev/shm rw - tmpfs shm rw\n"
         "22 20 0:42 / /sys/fs/cgroup ro - tmpfs tmpfs ro,mode=755\n"
         "23 22 0:43 " + pod + "/abcd /sys/fs/cgroup/cpu,cpuacct ro - cgroup cgroup ro,cpu,cpuacct\n"
         "24 22 0:44 / /sys/fs/cgroup/memory ro - cgroup cgroup ro,memory\n"
         "25 22 0:45 " + pod + "/abcd /sys/fs/cgroup/systemd ro - cgroup cgroup ro,name=systemd\n");
  t.file("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "200000\n");
  t.file("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  const std::string mem = "/sys/fs/cgroup/memory";
  t.file(mem + "/memory.limit_in_bytes", "9223372036854771712\n");
  t.file(mem + "/kubepods/memory.limit_in_bytes", "9223372036854771712\n");
  t.dir(mem + "/kubepods/burstable");  // no file at this level: skipped
  t.file(mem + pod + "/memory.limit_in_bytes", "4294967296\n");
  t.file(mem + pod + "/abcd/memory.limit_in_bytes", "9223372036854771712\n");
  t.file("/proc/meminfo", "MemTotal:       131072000 kB\n");
  t.file("/sys/devices/system/node/node0/cpulist", "0-31\n");
  t.file("/dev/null");
  net(t, "eth0", "up", "1", "0x1003", false);  // a veth: virtual
}

TEST(HostSense, KubernetesCgroupV1) {
  FakeTree t;
  kubernetes_v1(t);
  Host h = t.sense();
  EXPECT_EQ(codes(h.problems), "");
  EXPECT_EQ(h.hostname, "trainer-0");
  EXPECT_EQ(h.product_name, std::nullopt) << "no DMI: none, and no problem";
  EXPECT_EQ(h.online_cpus, 32);
  EXPECT_EQ(h.affinity_cpus, cpu_range(0, 31));
  EXPECT_EQ(h.cgroup_cpu_quota, 2.0);
  EXPECT_EQ(h.usable_cpus, 2);
  EXPECT_EQ(h.memory_total_bytes, 131072000ull * 1024);
  EXPECT_EQ(h.cgroup_memory_limit_bytes, 4294967296ull);
  EXPECT_EQ(h.numa_nodes, (std::vector<NumaNode>{{0, cpu_range(0, 31), std::nullopt}}));
  EXPECT_EQ(h.shm_bytes, 131072000ull * 1024 / 2);  // tmpfs default: half of RAM
  EXPECT_EQ(h.container, "kubernetes");
  EXPECT_TRUE(h.nvidia_device_nodes.empty());
  EXPECT_TRUE(h.ib_devices.empty());
  EXPECT_EQ(h.interfaces, (std::vector<NetInterface>{{"eth0", true, false, true}}));
}

TEST(HostSense, NoQuotaUsesAffinity) {
  FakeTree t;
  docker_v2(t);
  t.file("/sys/fs/cgroup/cpu.max", "max 100000\n");
  t.file("/sys/fs/cgroup/memory.max", "max\n");
  Host h = t.sense();
  EXPECT_EQ(h.cgroup_cpu_quota, std::nullopt);
  EXPECT_EQ(h.cgroup_memory_limit_bytes, std::nullopt);
  EXPECT_EQ(h.usable_cpus, 8);
}

TEST(HostSense, EmptyTreeGivesProblemsNotCrashes) {
  FakeTree t;
  Host h = t.sense();
  std::set<std::string> got;
  for (const Problem& p : h.problems) {
    got.insert(p.code);
    EXPECT_EQ(p.source, "host");
    EXPECT_NE(p.message.find("No such file or directory"), std::string::npos) << p.message;
    EXPECT_NE(p.message.find(t.root()), std::string::npos) << p.message;
    EXPECT_FALSE(p.fix.empty());
  }
  EXPECT_EQ(got, (std::set<std::string>{
                     "host_hostname_unknown", "host_online_cpus_unknown",
                     "host_affinity_unknown", "host_cgroup_unknown",
                     "host_mountinfo_unknown", "host_meminfo_unknown", "host_numa_unknown",
                     "host_dev_unreadable", "host_net_unreadable"}));
  Host want;
  want.problems = h.problems;
  EXPECT_EQ(h, want);  // nothing else known
}

TEST(HostSense, MissingRootGivesProblems) {
  SenseOptions opts;
  opts.root = "/nonexistent/gpuenv/root";
  Host h;
  h.hostname = "stale";
  sense_host(opts, &h);
  EXPECT_EQ(h.hostname, std::nullopt);
  EXPECT_EQ(h.problems.size(), 9u) << codes(h.problems);
}

TEST(HostSense, GarbageFilesGiveProblems) {
  FakeTree t;
  t.file("/proc/sys/kernel/hostname", "\n");
  t.file("/sys/devices/system/cpu/online", "0-zz\n");
  t.file("/proc/self/status", "Cpus_allowed_list:\t7-1\n");
  t.file("/proc/self/cgroup", "garbage\n");
  t.file("/proc/self/mountinfo", "1 2 3\n");
  t.file("/proc/meminfo", "MemFree: 5 kB\n");
  t.file("/sys/devices/system/node/node0/cpulist", "x\n");
  Host h = t.sense();
  std::map<std::string, std::string> got;
  for (const Problem& p : h.problems) got[p.code] = p.message;
  EXPECT_EQ(got["host_online_cpus_unknown"],
            "/sys/devices/system/cpu/online: bad CPU number \"zz\"");
  EXPECT_EQ(got["host_affinity_unknown"],
            "/proc/self/status Cpus_allowed_list: reversed CPU range \"7-1\"");
  EXPECT_EQ(got["host_cgroup_unknown"], "/proc/self/cgroup: bad cgroup line \"garbage\"");
  EXPECT_EQ(got["host_mountinfo_unknown"],
            "/proc/self/mountinfo: line 1: bad mountinfo line \"1 2 3\"");
  EXPECT_EQ(got["host_meminfo_unknown"], "/proc/meminfo: no MemTotal");
  EXPECT_EQ(got["host_numa_unknown"],
            "/sys/devices/system/node/node0/cpulist: bad CPU number \"x\"");
  EXPECT_EQ(h.hostname, std::nullopt);  // empty is unknown
  EXPECT_EQ(h.online_cpus, std::nullopt);
  EXPECT_EQ(h.usable_cpus, std::nullopt);
  EXPECT_TRUE(h.numa_nodes.empty());
}

TEST(HostSense, GarbageCgroupLimitsGiveProblems) {
  FakeTree t;
  docker_v2(t);
  t.file("/sys/fs/cgroup/cpu.max", "abc 100000\n");
  t.file("/sys/fs/cgroup/memory.max", "-5\n");
  Host h = t.sense();
  ASSERT_EQ(h.problems.size(), 2u) << codes(h.problems);
  EXPECT_EQ(h.problems[0].code, "host_cgroup_cpu_unreadable");
  EXPECT_EQ(h.problems[0].message, "/sys/fs/cgroup/cpu.max: bad cpu.max quota \"abc\"");
  EXPECT_EQ(h.problems[1].code, "host_cgroup_memory_unreadable");
  EXPECT_EQ(h.problems[1].message, "/sys/fs/cgroup/memory.max: bad memory limit \"-5\"");
  EXPECT_EQ(h.cgroup_cpu_quota, std::nullopt);
  EXPECT_EQ(h.usable_cpus, 8);
}

TEST(HostSense, CgroupNotMounted) {
  FakeTree t;
  docker_v2(t);
  t.file("/proc/self/mountinfo", "1 0 0:1 / / rw - overlay overlay rw\n");
  Host h = t.sense();
  ASSERT_FALSE(h.problems.empty());
  EXPECT_EQ(h.problems[0].code, "host_cgroup_not_mounted");
  EXPECT_EQ(h.problems[0].message,
            "/proc/self/mountinfo: no cgroup mount has the cpu and memory controllers");
  EXPECT_EQ(h.problems[1].code, "host_shm_unknown");
  EXPECT_EQ(h.cgroup_cpu_quota, std::nullopt);
}

TEST(HostSense, MemlockFromProcLimits) {
  const std::string header =
      "Limit                     Soft Limit           Hard Limit           Units     \n"
      "Max open files            1048576              1048576              files     \n";
  struct Row {
    const char* row;
    std::optional<std::uint64_t> want;
    const char* problem;
  } rows[] = {
      {"Max locked memory         65536                65536                bytes\n", 65536,
       ""},
      {"Max locked memory         unlimited            unlimited            bytes\n",
       UINT64_MAX, ""},
      {"Max locked memory         lots                 lots                 bytes\n",
       std::nullopt, "host_memlock_unknown (/proc/self/limits: bad Max locked memory \"lots\")\n"},
      {"", std::nullopt,
       "host_memlock_unknown (/proc/self/limits: no \"Max locked memory\" row)\n"},
  };
  for (const Row& r : rows) {
    FakeTree t;
    docker_v2(t);
    t.file("/proc/self/limits", header + r.row);
    Host h = t.sense();
    EXPECT_EQ(h.memlock_bytes, r.want) << r.row;
    EXPECT_EQ(codes(h.problems), r.problem);
  }
  FakeTree t;
  docker_v2(t);
  EXPECT_EQ(t.sense().memlock_bytes, std::nullopt);  // no file: unknown, quietly
}

TEST(HostSense, NumaNodesFromSysfsNotHwloc) {
  // A one-node tree read as sysfs says, including a CPU-less memory node.
  FakeTree t;
  docker_v2(t);
  t.file("/sys/devices/system/node/node2/cpulist", "\n");
  t.file("/sys/devices/system/node/node2/meminfo", "Node 2 MemTotal:       1024 kB\n");
  t.file("/sys/devices/system/node/has_cpu", "0-1\n");  // not a node
  Host h = t.sense();
  EXPECT_EQ(codes(h.problems), "");
  ASSERT_EQ(h.numa_nodes.size(), 3u);
  EXPECT_EQ(h.numa_nodes[2], (NumaNode{2, {}, 1024ull * 1024}));
}

TEST(HostSense, ContainerDetectionOrder) {
  struct Row {
    const char* name;
    std::map<std::string, std::string> files;
    std::optional<std::string> want;
  } rows[] = {
      {"bare host", {{"/proc/1/cgroup", "0::/init.scope\n"}}, std::nullopt},
      {"docker marker", {{"/.dockerenv", ""}}, "docker"},
      {"podman marker", {{"/run/.containerenv", ""}}, "podman"},
      {"kubernetes wins over docker",
       {{"/.dockerenv", ""}, {"/var/run/secrets/kubernetes.io/serviceaccount/token", "t"}},
       "kubernetes"},
      {"kubernetes variable",
       {{"/proc/self/environ", environ_file({"KUBERNETES_SERVICE_HOST=1"})}},
       "kubernetes"},
      {"marker wins over container=",
       {{"/.dockerenv", ""}, {"/proc/self/environ", environ_file({"container=lxc"})}},
       "docker"},
      {"container=podman", {{"/proc/self/environ", environ_file({"container=podman"})}},
       "podman"},
      {"container=systemd-nspawn",
       {{"/proc/self/environ", environ_file({"container=systemd-nspawn"})}}, "other"},
      {"container= empty", {{"/proc/self/environ", environ_file({"container="})}},
       std::nullopt},
      {"PID 1 cgroup v1", {{"/proc/1/cgroup", "12:devices:/docker/0123abcd\n"}}, "docker"},
      {"PID 1 cgroup lxc", {{"/proc/1/cgroup", "0::/lxc.payload.c1/init.scope\n"}}, "lxc"},
      {"containerd rootfs",
       {{"/proc/self/mountinfo",
         "1 0 0:1 / / rw - overlay overlay rw,lowerdir=/var/lib/containerd/io.containerd."
         "snapshotter.v1.overlayfs/snapshots/1/fs\n"}},
       "containerd"},
      {"docker hostname bind mount",
       {{"/proc/self/mountinfo",
         "1 0 259:1 / / rw - ext4 /dev/vda rw\n"
         "2 1 259:1 /var/lib/docker/containers/ab/hostname /etc/hostname rw - ext4 /dev/vda rw\n"}},
       "docker"},
      {"docker mounts elsewhere are the host's",
       {{"/proc/self/mountinfo",
         "1 0 259:1 / / rw - ext4 /dev/vda rw\n"
         "2 1 0:50 / /var/lib/docker/overlay2/x/merged rw - overlay overlay rw\n"}},
       std::nullopt},
  };
  for (const Row& r : rows) {
    FakeTree t;
    for (const auto& [path, text] : r.files) t.file(path, text);
    EXPECT_EQ(t.sense().container, r.want) << r.name;
  }
}

TEST(HostSense, LiveMachineInvariants) {
  Host h;
  sense_host(SenseOptions{}, &h);
  for (const Problem& p : h.problems)
    std::cout << "  problem: " << p.code << ": " << p.message << "\n";
  ASSERT_TRUE(h.hostname.has_value());
  EXPECT_FALSE(h.hostname->empty());
  ASSERT_TRUE(h.online_cpus.has_value());
  EXPECT_GT(*h.online_cpus, 0);
  ASSERT_TRUE(h.affinity_cpus.has_value());
  ASSERT_FALSE(h.affinity_cpus->empty());
  EXPECT_TRUE(std::is_sorted(h.affinity_cpus->begin(), h.affinity_cpus->end()));
  EXPECT_LT(h.affinity_cpus->back(), kMaxCpus);
  ASSERT_TRUE(h.usable_cpus.has_value());
  EXPECT_GE(*h.usable_cpus, 1);
  EXPECT_LE(*h.usable_cpus, static_cast<int>(h.affinity_cpus->size()));
  if (h.cgroup_cpu_quota) {
    EXPECT_GT(*h.cgroup_cpu_quota, 0);
  }
  ASSERT_TRUE(h.memory_total_bytes.has_value());
  EXPECT_GT(*h.memory_total_bytes, 0u);
  if (h.cgroup_memory_limit_bytes) {
    EXPECT_LT(*h.cgroup_memory_limit_bytes, kUnlimitedMemory);
  }
  ASSERT_FALSE(h.numa_nodes.empty());
  for (const NumaNode& n : h.numa_nodes) {
    EXPECT_GE(n.index, 0);
    EXPECT_TRUE(std::is_sorted(n.cpus.begin(), n.cpus.end()));
  }
  EXPECT_TRUE(std::is_sorted(h.interfaces.begin(), h.interfaces.end(),
                             [](auto& a, auto& b) { return a.name < b.name; }));
  for (const std::string& d : h.nvidia_device_nodes) EXPECT_EQ(d.rfind("/dev/nvidia", 0), 0u);
  struct rlimit rl;
  ASSERT_EQ(getrlimit(RLIMIT_MEMLOCK, &rl), 0);
  EXPECT_EQ(h.memlock_bytes, rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : rl.rlim_cur);
}

TEST(HostSense, LiveNumaNodesMatchSysfs) {
  if (!stdfs::exists("/sys/devices/system/node/node0")) GTEST_SKIP() << "no sysfs NUMA nodes";
  Host h;
  sense_host(SenseOptions{}, &h);
  std::vector<int> indices;
  for (const auto& e : stdfs::directory_iterator("/sys/devices/system/node")) {
    std::string name = e.path().filename().string();
    if (name.rfind("node", 0) == 0 && name.size() > 4 &&
        name.find_first_not_of("0123456789", 4) == std::string::npos)
      indices.push_back(std::stoi(name.substr(4)));
  }
  std::sort(indices.begin(), indices.end());
  ASSERT_EQ(h.numa_nodes.size(), indices.size());
  for (std::size_t i = 0; i < indices.size(); ++i) {
    EXPECT_EQ(h.numa_nodes[i].index, indices[i]);
    std::ifstream in("/sys/devices/system/node/node" + std::to_string(indices[i]) + "/cpulist");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<int> cpus;
    std::string err;
    ASSERT_TRUE(parse_cpu_list(text, &cpus, &err)) << err;
    EXPECT_EQ(h.numa_nodes[i].cpus, cpus);
  }
}

// Physical cores from sysfs SMT siblings, within the affinity: 8 cores of 2
// threads (CPU c and c+8), the process allowed on CPUs 0-3 and 8-10.
TEST(HostSense, CpuCoresGroupSmtSiblingsInTheAffinity) {
  FakeTree t;
  docker_v2(t);
  t.file("/proc/self/status", "Name:\tgpuenv\nCpus_allowed_list:\t0-3,8-10\n");
  for (int c = 0; c < 16; ++c)
    t.file("/sys/devices/system/cpu/cpu" + std::to_string(c) + "/topology/thread_siblings_list",
           std::to_string(c % 8) + "," + std::to_string(c % 8 + 8) + "\n");
  Host h = t.sense();
  std::vector<std::vector<int>> want = {{0, 8}, {1, 9}, {2, 10}, {3}};
  EXPECT_EQ(h.cpu_cores, want);
}

TEST(HostSense, CpuCoresUnknownWhenATopologyFileIsMissing) {
  FakeTree t;
  docker_v2(t);
  for (int c = 0; c < 7; ++c)  // CPU 7 of the affinity 0-7 has none
    t.file("/sys/devices/system/cpu/cpu" + std::to_string(c) + "/topology/thread_siblings_list",
           std::to_string(c) + "\n");
  EXPECT_EQ(t.sense().cpu_cores, std::nullopt);
}

TEST(HostSense, LiveCpuCoresCoverTheAffinity) {
  Host h;
  sense_host(SenseOptions{}, &h);
  if (!h.cpu_cores) GTEST_SKIP() << "no sysfs CPU topology";
  std::vector<int> all;
  for (const auto& core : *h.cpu_cores) {
    EXPECT_FALSE(core.empty());
    all.insert(all.end(), core.begin(), core.end());
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, h.affinity_cpus);
}

}  // namespace
}  // namespace gpuenv
