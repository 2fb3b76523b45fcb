#include "sense/host/host_parse.h"

#include <gtest/gtest.h>

namespace gpuenv {
namespace {

using Cpus = std::vector<int>;

std::vector<int> range(int lo, int hi) {
  std::vector<int> v;
  for (int c = lo; c <= hi; ++c) v.push_back(c);
  return v;
}

TEST(HostParseCpuList, Good) {
  struct Row {
    std::string text;
    Cpus want;
  } rows[] = {
      {"0", {0}},
      {"0-3\n", {0, 1, 2, 3}},
      {"0-3,8,10-11", {0, 1, 2, 3, 8, 10, 11}},
      {"", {}},
      {"\n", {}},
      {" 5 , 1-2 ", {1, 2, 5}},
      {"3,1,2,1", {1, 2, 3}},  // unordered and repeated: sorted, unique
      {"7-7", {7}},
      {"65535", {65535}},
      {"0-65535", range(0, 65535)},
  };
  for (const Row& r : rows) {
    Cpus got{-1};
    std::string err;
    EXPECT_TRUE(parse_cpu_list(r.text, &got, &err)) << r.text << ": " << err;
    EXPECT_EQ(got, r.want) << r.text;
  }
}

TEST(HostParseCpuList, Hostile) {
  struct Row {
    std::string text, err;
  } rows[] = {
      {"garbage", "bad CPU number \"garbage\""},
      {"3-1", "reversed CPU range \"3-1\""},
      {"-1", "bad CPU number \"\""},
      {"1-", "bad CPU number \"\""},
      {"1,,2", "bad CPU number \"\""},
      {"1,", "bad CPU number \"\""},
      {"+1", "bad CPU number \"+1\""},
      {"0x10", "bad CPU number \"0x10\""},
      {"1-2-3", "bad CPU number \"2-3\""},
      {"65536", "CPU \"65536\" >= 65536"},
      {"0-4294967296", "bad CPU number \"4294967296\""},
      {"0-99999999999999999999", "bad CPU number \"99999999999999999999\""},
      {"0-65535,0-1", "CPU list names more than 65536 CPUs"},
      {"0-3:1/2", "bad CPU number \"3:1/2\""},
      {std::string("1\0002", 3), "bad CPU number \"1?2\""},
  };
  for (const Row& r : rows) {
    Cpus got{9};
    std::string err;
    EXPECT_FALSE(parse_cpu_list(r.text, &got, &err)) << r.text;
    EXPECT_EQ(err, r.err) << r.text;
  }
}

TEST(HostParseCpuList, FormatRoundTrips) {
  EXPECT_EQ(format_cpu_list({}), "");
  EXPECT_EQ(format_cpu_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(format_cpu_list({5}), "5");
  Cpus back;
  std::string err;
  ASSERT_TRUE(parse_cpu_list(format_cpu_list({1, 3, 4, 5, 9}), &back, &err));
  EXPECT_EQ(back, (Cpus{1, 3, 4, 5, 9}));
}

TEST(HostParseCpuMax, Table) {
  struct Row {
    std::string text;
    bool ok;
    std::optional<double> want;
  } rows[] = {
      {"max 100000\n", true, std::nullopt},
      {"max", true, std::nullopt},
      {"150000 100000\n", true, 1.5},
      {"400000 100000", true, 4.0},
      {"50000 100000", true, 0.5},
      {"200000", true, 2.0},  // period omitted: 100000
      {"", false, std::nullopt},
      {"max 0", false, std::nullopt},
      {"0 100000", false, std::nullopt},
      {"-1 100000", false, std::nullopt},
      {"150000 100000 7", false, std::nullopt},
      {"1.5 1", false, std::nullopt},
      {"max abc", false, std::nullopt},
      {"99999999999999999999 100000", false, std::nullopt},
  };
  for (const Row& r : rows) {
    std::optional<double> got = 42.0;
    std::string err;
    EXPECT_EQ(parse_cpu_max(r.text, &got, &err), r.ok) << r.text;
    if (r.ok) {
      EXPECT_EQ(got, r.want) << r.text;
    } else {
      EXPECT_FALSE(err.empty()) << r.text;
    }
  }
}

TEST(HostParseCfsQuota, Table) {
  struct Row {
    std::string quota, period;
    bool ok;
    std::optional<double> want;
  } rows[] = {
      {"-1\n", "100000\n", true, std::nullopt},
      {"200000\n", "100000\n", true, 2.0},
      {"150000", "100000", true, 1.5},
      {"50000", "50000", true, 1.0},
      {"-2", "100000", false, std::nullopt},
      {"0", "100000", false, std::nullopt},
      {"100000", "0", false, std::nullopt},
      {"100000", "", false, std::nullopt},
      {"", "100000", false, std::nullopt},
      {"-1", "x", false, std::nullopt},  // a bad period is bad even unlimited
  };
  for (const Row& r : rows) {
    std::optional<double> got = 42.0;
    std::string err;
    EXPECT_EQ(parse_cfs_quota(r.quota, r.period, &got, &err), r.ok) << r.quota;
    if (r.ok) {
      EXPECT_EQ(got, r.want) << r.quota;
    }
  }
}

TEST(HostParseMemoryLimit, Table) {
  struct Row {
    std::string text;
    bool ok;
    std::optional<std::uint64_t> want;
  } rows[] = {
      {"max\n", true, std::nullopt},
      {"8589934592\n", true, 8589934592ull},
      {"0", true, 0ull},
      {"9223372036854771712\n", true, std::nullopt},  // v1, 4 KiB pages
      {"9223372036854710272", true, std::nullopt},    // v1, 64 KiB pages
      {"4611686018427387903", true, 4611686018427387903ull},  // 2^62 - 1
      {"18446744073709551615", true, std::nullopt},
      {"18446744073709551616", false, std::nullopt},
      {"-1", false, std::nullopt},
      {"8G", false, std::nullopt},
      {"", false, std::nullopt},
      {"max max", false, std::nullopt},
  };
  for (const Row& r : rows) {
    std::optional<std::uint64_t> got = 7;
    std::string err;
    EXPECT_EQ(parse_memory_limit(r.text, &got, &err), r.ok) << r.text;
    if (r.ok) {
      EXPECT_EQ(got, r.want) << r.text;
    }
  }
}

TEST(HostParseProcCgroup, V1AndV2) {
  std::vector<CgroupEntry> got;
  std::string err;
  ASSERT_TRUE(parse_proc_cgroup(
      "12:memory:/docker/abc\n"
      "4:cpu,cpuacct:/docker/abc\n"
      "1:name=systemd:/docker/abc\n"
      "0::/system.slice/x:y.service\n",
      &got, &err))
      << err;
  std::vector<CgroupEntry> want = {
      {12, {"memory"}, "/docker/abc"},
      {4, {"cpu", "cpuacct"}, "/docker/abc"},
      {1, {"name=systemd"}, "/docker/abc"},
      {0, {}, "/system.slice/x:y.service"},  // colons in the path are kept
  };
  EXPECT_EQ(got, want);
}

TEST(HostParseProcCgroup, Hostile) {
  for (std::string text : {"0:/", "x::/", "0::", "0::relative", ":::/", "-1::/",
                           "99999999999::/", "0::/\ngarbage\n"}) {
    std::vector<CgroupEntry> got;
    std::string err;
    EXPECT_FALSE(parse_proc_cgroup(text, &got, &err)) << text;
    EXPECT_FALSE(err.empty());
  }
}

TEST(HostParseMountinfo, Lines) {
  MountInfo m;
  std::string err;
  ASSERT_TRUE(parse_mountinfo_line(
      "36 35 98:0 /mnt1 /mnt\\0402 rw,noatime master:1 shared:7 - ext3 /dev/root rw,errors=continue",
      &m, &err))
      << err;
  EXPECT_EQ(m, (MountInfo{36, 35, "/mnt1", "/mnt 2", "ext3", "/dev/root",
                          {"rw", "errors=continue"}}));

  ASSERT_TRUE(parse_mountinfo_line(
      "31 23 0:28 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate", &m, &err));
  EXPECT_EQ(m, (MountInfo{31, 23, "/", "/sys/fs/cgroup", "cgroup2", "cgroup2",
                          {"rw", "nsdelegate"}}));

  ASSERT_TRUE(parse_mountinfo_line("5 1 0:4 net:[4026531840] /run/netns/x rw - nsfs nsfs",
                                   &m, &err));  // no super options
  EXPECT_EQ(m.root, "net:[4026531840]");
  EXPECT_TRUE(m.super_options.empty());
}

TEST(HostParseMountinfo, Hostile) {
  for (std::string line : {
           "",
           "garbage",
           "1 2 0:1 / / - tmpfs t rw",      // only five fields before "-"
           "1 2 0:1 / / rw tmpfs tmpfs rw",  // no separator
           "1 2 0:1 / / rw - tmpfs",         // no source
           "1 2 0:1 / / rw - a b c d",       // too many after "-"
           "x 2 0:1 / / rw - tmpfs t rw",
           "1 2 0:1 / relative rw - tmpfs t rw",
           "1 2 0:1 / \\057 rw - tmpfs t rw",  // "\057" decodes to "/": fine
       }) {
    MountInfo m;
    std::string err;
    bool ok = parse_mountinfo_line(line, &m, &err);
    EXPECT_EQ(ok, line.find("\\057") != std::string::npos) << line << ": " << err;
  }
}

TEST(HostParseMountinfo, WholeFileNamesTheBadLine) {
  std::vector<MountInfo> mounts;
  std::string err;
  EXPECT_FALSE(parse_mountinfo("1 0 0:1 / / rw - ext4 /dev/vda rw\n\nbad\n", &mounts, &err));
  EXPECT_EQ(err, "line 3: bad mountinfo line \"bad\"");
  ASSERT_TRUE(parse_mountinfo("1 0 0:1 / / rw - ext4 /dev/vda rw\n\n", &mounts, &err));
  EXPECT_EQ(mounts.size(), 1u);
}

TEST(HostParseUnescapeOctal, Table) {
  struct Row {
    std::string in, out;
  } rows[] = {
      {"/a\\040b", "/a b"},     {"\\011\\012\\134", "\t\n\\"},
      {"\\04", "\\04"},         {"\\", "\\"},
      {"\\999", "\\999"},       {"\\000", "\\000"},  // NUL is not decoded
      {"\\400", "\\400"},       {"plain", "plain"},
      {"\\0401", " 1"},
  };
  for (const Row& r : rows) EXPECT_EQ(unescape_octal(r.in), r.out) << r.in;
}

std::vector<MountInfo> mounts(const std::string& text) {
  std::vector<MountInfo> m;
  std::string err;
  EXPECT_TRUE(parse_mountinfo(text, &m, &err)) << err;
  return m;
}

TEST(HostParseLocateCgroup, Table) {
  const std::string v2_ns = "30 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
  const std::string v2_host = "30 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
  const std::string v2_bound = "30 1 0:26 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
  const std::string v1 =
      "32 31 0:29 /docker/abc /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
      "33 31 0:30 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
      "41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
  struct Row {
    const char* name;
    std::vector<CgroupEntry> entries;
    std::string mountinfo;
    std::string controller;
    std::optional<CgroupLocation> want;
  } rows[] = {
      {"v2 in a cgroup namespace", {{0, {}, "/"}}, v2_ns, "cpu",
       CgroupLocation{2, {"/sys/fs/cgroup"}}},
      {"v2 on the host walks up", {{0, {}, "/user.slice/u-1000.slice"}}, v2_host, "memory",
       CgroupLocation{2, {"/sys/fs/cgroup/user.slice/u-1000.slice",
                          "/sys/fs/cgroup/user.slice", "/sys/fs/cgroup"}}},
      {"v2 mount of a subtree", {{0, {}, "/docker/abc/sub"}}, v2_bound, "cpu",
       CgroupLocation{2, {"/sys/fs/cgroup/sub", "/sys/fs/cgroup"}}},
      {"v2 path outside the mount root", {{0, {}, "/other"}}, v2_bound, "cpu",
       CgroupLocation{2, {"/sys/fs/cgroup"}}},
      {"v2 path climbing out of a namespace", {{0, {}, "/../../x"}}, v2_ns, "cpu",
       CgroupLocation{2, {"/sys/fs/cgroup"}}},
      {"v1 cpu bound at the container's cgroup",
       {{4, {"cpu", "cpuacct"}, "/docker/abc"}, {0, {}, "/"}}, v1, "cpu",
       CgroupLocation{1, {"/sys/fs/cgroup/cpu,cpuacct"}}},
      {"v1 memory at the root walks up", {{9, {"memory"}, "/docker/abc"}}, v1, "memory",
       CgroupLocation{1, {"/sys/fs/cgroup/memory/docker/abc",
                          "/sys/fs/cgroup/memory/docker", "/sys/fs/cgroup/memory"}}},
      {"hybrid: v2 for a controller v1 lacks",
       {{4, {"cpu", "cpuacct"}, "/docker/abc"}, {0, {}, "/"}}, v1, "pids",
       CgroupLocation{2, {"/sys/fs/cgroup/unified"}}},
      {"no mount", {{0, {}, "/"}}, "", "cpu", std::nullopt},
      {"no entry", {}, v2_ns, "cpu", std::nullopt},
      {"v1 entry, v1 mount lacks it", {{4, {"cpu"}, "/"}},
       "33 31 0:30 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n", "cpu",
       std::nullopt},
  };
  for (const Row& r : rows)
    EXPECT_EQ(locate_cgroup(r.entries, mounts(r.mountinfo), r.controller), r.want)
        << r.name;
}

TEST(HostParseMeminfo, ProcAndNode) {
  std::map<std::string, std::uint64_t> got;
  std::string err;
  ASSERT_TRUE(parse_meminfo(
      "MemTotal:       16318480 kB\nMemFree:  1 kB\nHugePages_Total:       0\n", &got, &err));
  EXPECT_EQ(got, (std::map<std::string, std::uint64_t>{
                     {"MemTotal", 16318480ull * 1024}, {"MemFree", 1024}, {"HugePages_Total", 0}}));
  ASSERT_TRUE(parse_meminfo("Node 1 MemTotal:       33554432 kB\n", &got, &err));
  EXPECT_EQ(got.at("MemTotal"), 33554432ull * 1024);
}

TEST(HostParseMeminfo, Hostile) {
  for (std::string text : {"MemTotal 5 kB", "MemTotal: kB", "MemTotal: -5 kB",
                           "MemTotal: 5 MB", "MemTotal: 18014398509481984 kB", ": 5",
                           "Node 0", "MemTotal: 5 kB extra"}) {
    std::map<std::string, std::uint64_t> got;
    std::string err;
    EXPECT_FALSE(parse_meminfo(text, &got, &err)) << text;
  }
}

TEST(HostParseSizeOption, Table) {
  struct Row {
    std::vector<std::string> options;
    bool ok;
    std::optional<std::uint64_t> want;
  } rows[] = {
      {{"rw", "size=65536k", "mode=1777"}, true, 64ull << 20},
      {{"size=8g"}, true, 8ull << 30},
      {{"size=4096"}, true, 4096ull},
      {{"rw", "mode=1777"}, true, std::nullopt},
      {{"size=50%"}, false, std::nullopt},
      {{"size="}, false, std::nullopt},
      {{"size=k"}, false, std::nullopt},
      {{"size=99999999999t"}, false, std::nullopt},
  };
  for (const Row& r : rows) {
    std::optional<std::uint64_t> got = 1;
    std::string err;
    EXPECT_EQ(parse_size_option(r.options, &got, &err), r.ok) << r.options[0];
    if (r.ok) {
      EXPECT_EQ(got, r.want) << r.options[0];
    }
  }
}

TEST(HostParseEnviron, FirstWins) {
  std::string text("A=1\0B=x=y\0A=2\0NOEQ\0=v\0\0", 23);
  EXPECT_EQ(parse_environ(text),
            (std::map<std::string, std::string>{{"A", "1"}, {"B", "x=y"}}));
}

TEST(HostParseStatusField, Table) {
  std::string status = "Name:\tcat\nCpus_allowed:\tff\nCpus_allowed_list:\t0-7\n";
  EXPECT_EQ(proc_status_field(status, "Cpus_allowed_list"), "0-7");
  EXPECT_EQ(proc_status_field(status, "Cpus_allowed"), "ff");
  EXPECT_EQ(proc_status_field(status, "Mems_allowed_list"), std::nullopt);
}

TEST(HostParseContainer, HintsAndKinds) {
  EXPECT_EQ(container_hint("12:cpu:/kubepods/burstable/pod1/docker-abc"), "kubernetes");
  EXPECT_EQ(container_hint("0::/docker/abc"), "docker");
  EXPECT_EQ(container_hint("0::/system.slice/cri-containerd-abc.scope"), "containerd");
  EXPECT_EQ(container_hint("/var/lib/containers/storage/overlay-containers/x"), "podman");
  EXPECT_EQ(container_hint("0::/lxc.payload.c1"), "lxc");
  EXPECT_EQ(container_hint("0::/init.scope"), std::nullopt);
  EXPECT_EQ(container_kind("podman"), "podman");
  EXPECT_EQ(container_kind("lxc-libvirt"), "lxc");
  EXPECT_EQ(container_kind("systemd-nspawn"), "other");
  EXPECT_EQ(container_kind("docker\n"), "docker");
}

TEST(HostParseInterfaceUp, Table) {
  EXPECT_EQ(interface_up("up\n", std::nullopt), true);
  EXPECT_EQ(interface_up("down", "0x1003"), false);
  EXPECT_EQ(interface_up("dormant", std::nullopt), false);
  EXPECT_EQ(interface_up("unknown", "0x9\n"), true);   // loopback
  EXPECT_EQ(interface_up("unknown", "0x1002"), false);
  EXPECT_EQ(interface_up("unknown", std::nullopt), std::nullopt);
  EXPECT_EQ(interface_up("unknown", "9"), std::nullopt);
  EXPECT_EQ(interface_up("unknown", "0xzz"), std::nullopt);
  EXPECT_EQ(interface_up("garbage", "0x"), std::nullopt);
}

TEST(HostParseSysfsPciAddress, Table) {
  const std::pair<const char*, std::optional<std::string>> rows[] = {
      {"00000000:18:00.0", "0000:18:00.0"},
      {"00000000:3B:00.0", "0000:3b:00.0"},  // NVML's upper case, sysfs' lower
      {"00000000:bd:1f.7", "0000:bd:1f.7"},
      {"0000:3B:00.0", "0000:3b:00.0"},      // the legacy 4-digit domain
      {"00010000:01:00.0", "10000:01:00.0"},  // VMD domains have 5 digits
      {"00000002:0a:00.1", "0002:0a:00.1"},
      {"", std::nullopt},
      {"00000000:18:00", std::nullopt},
      {"00000000:18:00.0\n", std::nullopt},
      {"000000000:18:00.0", std::nullopt},  // 9 digits of domain
      {"00000000:118:00.0", std::nullopt},
      {"00000000:18:20.0", std::nullopt},   // device > 0x1f
      {"00000000:18:00.8", std::nullopt},   // function > 7
      {"0000000g:18:00.0", std::nullopt},
      {"../../x:18:00.0", std::nullopt},
  };
  for (const auto& [in, out] : rows) EXPECT_EQ(sysfs_pci_address(in), out) << in;
}

TEST(HostParsePciTopology, Table) {
  struct Row {
    const char* a;
    const char* b;
    std::optional<int> numa_a, numa_b;
    std::optional<std::string> want;
  };
  const Row rows[] = {
      // Two GPUs under one PCIe switch (upstream 17:00.0, downstream 18:00.0 / 18:01.0).
      {"/sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/0000:18:00.0/0000:19:00.0",
       "/sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/0000:18:01.0/0000:1a:00.0", 0, 0,
       "single"},
      // Two cascaded switches between them.
      {"/sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/0000:18:00.0/0000:19:00.0/"
       "0000:1a:00.0/0000:1b:00.0",
       "/sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/0000:18:01.0/0000:1c:00.0", 0, 0,
       "multiple"},
      // Separate root ports of one root complex (the 2x H200 VM).
      {"/sys/devices/pci0000:00/0000:00:06.0", "/sys/devices/pci0000:00/0000:00:07.0",
       std::nullopt, std::nullopt, "hostbridge"},
      {"/sys/devices/pci0000:16/0000:16:02.0/0000:18:00.0",
       "/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0", 0, 0, "node"},
      {"/sys/devices/pci0000:16/0000:16:02.0/0000:18:00.0",
       "/sys/devices/pci0000:97/0000:97:02.0/0000:98:00.0", 0, 1, "system"},
      {"/sys/devices/pci0000:16/0000:18:00.0", "/sys/devices/pci0000:16/0000:18:00.0", 0, 0,
       std::nullopt},  // the same device
      {"/sys/devices/pci0000:16/0000:18:00.0", "/sys/devices/pci0000:16/0000:18:00.0/0000:19:00.0",
       0, 0, std::nullopt},  // one above the other
      {"/sys/devices/platform/foo", "/sys/devices/pci0000:00/0000:00:07.0", 0, 0, std::nullopt},
      {"/sys/devices/pci0000:00", "/sys/devices/pci0000:00/0000:00:07.0", 0, 0, std::nullopt},
      {"/devices/pci0000:00/0000:00:06.0", "/sys/devices/pci0000:00/0000:00:07.0", 0, 0,
       std::nullopt},
      {"/sys/devices/pci0000:00/0000:00:06.0/x", "/sys/devices/pci0000:00/0000:00:07.0", 0, 0,
       std::nullopt},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(pci_topology(r.a, r.b, r.numa_a, r.numa_b), r.want) << r.a << " | " << r.b;
    EXPECT_EQ(pci_topology(r.b, r.a, r.numa_b, r.numa_a), r.want) << "swapped: " << r.a;
  }
}

TEST(HostParseNumaNode, Table) {
  std::optional<int> node = 7;
  std::string err;
  EXPECT_TRUE(parse_numa_node("1\n", &node, &err));
  EXPECT_EQ(node, 1);
  EXPECT_TRUE(parse_numa_node("-1\n", &node, &err));  // no NUMA affinity
  EXPECT_EQ(node, std::nullopt);
  node = 7;
  for (const char* bad : {"", "\n", "-2", "x", "1 2", "+1", "99999999999"}) {
    EXPECT_FALSE(parse_numa_node(bad, &node, &err)) << bad;
    EXPECT_FALSE(err.empty());
    EXPECT_EQ(node, 7) << bad;
  }
}

TEST(HostParseLimit, ProcSelfLimits) {
  const std::string limits =
      "Limit                     Soft Limit           Hard Limit           Units     \n"
      "Max cpu time              unlimited            unlimited            seconds   \n"
      "Max locked memory         8388608              16777216             bytes     \n"
      "Max locked memory more    1                    1                    bytes     \n";
  std::optional<std::uint64_t> v;
  std::string err;
  ASSERT_TRUE(parse_limit(limits, "Max locked memory", &v, &err)) << err;
  EXPECT_EQ(v, 8388608u);  // the soft limit
  ASSERT_TRUE(parse_limit(limits, "Max cpu time", &v, &err)) << err;
  EXPECT_EQ(v, UINT64_MAX);  // unlimited
  EXPECT_FALSE(parse_limit(limits, "Max open files", &v, &err));
  EXPECT_EQ(err, "no \"Max open files\" row");
  EXPECT_FALSE(parse_limit("Max locked memory   -1  -1 bytes\n", "Max locked memory", &v, &err));
  EXPECT_EQ(err, "bad Max locked memory \"-1\"");
  EXPECT_FALSE(parse_limit("Max locked memory\n", "Max locked memory", &v, &err));
}

TEST(HostParseKeyValues, PyvenvCfg) {
  auto kv = parse_key_values(
      "home = /usr/bin\ninclude-system-site-packages = false\n# c = d\nversion = 3.11.2\nnoeq\n");
  EXPECT_EQ(kv, (std::map<std::string, std::string>{{"home", "/usr/bin"},
                                                    {"include-system-site-packages", "false"},
                                                    {"version", "3.11.2"}}));
}

TEST(HostParseTorchVersion, Good) {
  struct Row {
    std::string text;
    TorchVersionFile want;
  } rows[] = {
      {"from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda']\n"
       "__version__ = '2.11.0+cu130'\ndebug = False\ncuda: Optional[str] = '13.0'\n"
       "git_version = 'abc'\nhip: Optional[str] = None\n",
       {"2.11.0+cu130", "13.0"}},
      {"__version__ = '2.5.1+cpu'\ncuda: Optional[str] = None\n", {"2.5.1+cpu", std::nullopt}},
      {"__version__ = \"1.13.1\"\ncuda = None  # cpu\n", {"1.13.1", std::nullopt}},
      {"__version__ = '2.0.0'\n", {"2.0.0", std::nullopt}},
      {"__version__ = '1.0'\n__version__ = '2.0'  # later wins\ncuda='12.1'",
       {"2.0", "12.1"}},
      {"__version__: str = '2.4.0'\r\ncuda: Optional[str] = '12.4'\r\n", {"2.4.0", "12.4"}},
      {"__version__ == '9'\n__version__ = '2.1'\n", {"2.1", std::nullopt}},
  };
  for (const Row& r : rows) {
    TorchVersionFile got;
    std::string err;
    EXPECT_TRUE(parse_torch_version_py(r.text, &got, &err)) << r.text << ": " << err;
    EXPECT_EQ(got.version, r.want.version) << r.text;
    EXPECT_EQ(got.cuda, r.want.cuda) << r.text;
  }
}

TEST(HostParseTorchVersion, Hostile) {
  for (std::string text : {
           "",
           "cuda = '12.1'\n",                      // no __version__
           "__version__ = get_version()\n",        // not a literal
           "__version__ = '2.0' + x\n",
           "__version__ = ''\n",
           "__version__ = '2.0\n",                 // unterminated
           "__version__ = '2\\x00'\n",             // escapes refused
           "__version__ = None\n",                 // None only for cuda
           "__version__ = '2.0'\ncuda = 12.1\n",
           "__version__ = '2.0'\ncuda: Optional[str]\n = '1'",
           "__version__ = '\x01'\n",
           "__version__ = '\".1'\n",           // a quote inside the other kind (fuzzer)
           "__version__ = '2.0'\ncuda = \"12'1\"\n",
       }) {
    TorchVersionFile got;
    std::string err;
    bool ok = parse_torch_version_py(text, &got, &err);
    // An annotation without '=' is simply not an assignment of cuda.
    bool want_ok = text.find("Optional[str]\n") != std::string::npos;
    EXPECT_EQ(ok, want_ok) << text;
    if (!ok) {
      EXPECT_FALSE(err.empty()) << text;
    }
  }
}

}  // namespace
TEST(HostParseRecord, FirstFieldOfEachLine) {
  struct Row {
    const char* text;
    std::vector<std::string> paths;
  } rows[] = {
      {"", {}},
      {"a.so,sha256=x,1\nb/c.so,,\n", {"a.so", "b/c.so"}},
      {"a.so,,\r\n\r\nb.so\n", {"a.so", "b.so"}},             // CRLF, a blank line, no commas
      {"\"x,y.so\",sha256=z,3\n", {"x,y.so"}},                  // a quoted comma
      {"\"say \"\"hi\"\".so\",,\n", {"say \"hi\".so"}},       // a doubled quote
      {"\"never closed.so,,\nok.so,,\n", {"ok.so"}},            // skipped, the next line read
      {",sha256=x,1\n\"\",,\n", {}},                            // empty paths
      {"../../../bin/tool,,\n", {"../../../bin/tool"}},
  };
  for (const Row& r : rows) EXPECT_EQ(parse_record_paths(r.text), r.paths) << r.text;
}

TEST(HostParseRecord, DistInfoName) {
  EXPECT_EQ(dist_info_name("flash_attn-2.7.4.post1.dist-info"), "flash_attn");
  EXPECT_EQ(dist_info_name("torch-2.11.0+cu130.dist-info"), "torch");
  EXPECT_EQ(dist_info_name("zope.interface-7.0.dist-info"), "zope.interface");
  for (const char* bad : {"broken.dist-info", "-1.0.dist-info", "x-.dist-info", ".dist-info",
                          "x-1.0.egg-info", "x-1.0.dist-info/RECORD", "a/b-1.0.dist-info",
                          "x y-1.0.dist-info"})
    EXPECT_EQ(dist_info_name(bad), std::nullopt) << bad;
}

}  // namespace gpuenv
