// libFuzzer target for every parser in host_parse.h. The first byte picks
// the parser (a letter, so seeds in tests/corpus/host_parse_fuzz/ stay
// readable text; any other byte picks one by its value) and the rest is the
// file. Each parser's results are checked against invariants that must
// hold for any input, so a wrong answer fails as loudly as a crash.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "sense/host/host_parse.h"
#include "fuzz_check.h"

namespace gpuenv {
namespace {

// Aborts, which libFuzzer reports as a crash, when an invariant fails.
bool printable(const std::string& s) {
  for (char c : s)
    if (c < 0x20 || c >= 0x7f) return false;
  return true;
}

void check_cpu_list(std::string_view text) {
  std::vector<int> cpus, again;
  std::string err;
  if (!parse_cpu_list(text, &cpus, &err)) return CHECK(!err.empty());
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    CHECK(cpus[i] >= 0 && cpus[i] < kMaxCpus);
    CHECK(i == 0 || cpus[i - 1] < cpus[i]);  // sorted and unique
  }
  CHECK(parse_cpu_list(format_cpu_list(cpus), &again, &err));
  CHECK(again == cpus);
}

void check_cpus(bool ok, const std::optional<double>& cpus, const std::string& err) {
  if (!ok) return CHECK(!err.empty());
  if (cpus) CHECK(std::isfinite(*cpus) && *cpus > 0);
}

void check_cpu_max(std::string_view text) {
  std::optional<double> cpus;
  std::string err;
  check_cpus(parse_cpu_max(text, &cpus, &err), cpus, err);
}

void check_cfs(std::string_view text) {
  std::size_t nl = text.find('\n');
  std::string_view quota = text.substr(0, nl);
  std::string_view period = nl == text.npos ? "" : text.substr(nl + 1);
  std::optional<double> cpus;
  std::string err;
  check_cpus(parse_cfs_quota(quota, period, &cpus, &err), cpus, err);
}

void check_memory_limit(std::string_view text) {
  std::optional<std::uint64_t> bytes;
  std::string err;
  if (!parse_memory_limit(text, &bytes, &err)) return CHECK(!err.empty());
  if (bytes) CHECK(*bytes < kUnlimitedMemory);
}

void check_location(const std::optional<CgroupLocation>& loc,
                    const std::vector<MountInfo>& mounts) {
  if (!loc) return;
  CHECK(loc->version == 1 || loc->version == 2);
  CHECK(!loc->dirs.empty());
  bool is_mount = false;
  for (const MountInfo& m : mounts) is_mount |= m.mount_point == loc->dirs.back();
  CHECK(is_mount);
  for (std::size_t i = 0; i + 1 < loc->dirs.size(); ++i) {
    const std::string& parent = loc->dirs[i + 1];
    CHECK(loc->dirs[i].size() > parent.size());
    CHECK(loc->dirs[i].compare(0, parent.size(), parent) == 0);
  }
  // Below the mount point, no component may climb or repeat.
  std::string rel = loc->dirs[0].substr(loc->dirs.back().size());
  std::size_t parts = 0;
  for (std::size_t i = 0; i < rel.size();) {
    std::size_t slash = std::min(rel.find('/', i), rel.size());
    std::string part = rel.substr(i, slash - i);
    CHECK(part != "." && part != ".." && (!part.empty() || i == 0));
    parts += !part.empty();
    i = slash + 1;
  }
  CHECK(parts + 1 == loc->dirs.size());
}

void check_locate(const std::vector<CgroupEntry>& entries,
                  const std::vector<MountInfo>& mounts) {
  for (const char* c : {"cpu", "memory", "name=systemd", ""})
    check_location(locate_cgroup(entries, mounts, c), mounts);
}

const std::vector<MountInfo>& typical_mounts() {
  static const std::vector<MountInfo> m = {
      {30, 1, "/", "/sys/fs/cgroup", "cgroup2", "cgroup2", {"rw"}},
      {31, 1, "/docker/abc", "/sys/fs/cgroup/cpu,cpuacct", "cgroup", "cgroup",
       {"rw", "cpu", "cpuacct"}},
      {32, 1, "/", "/sys/fs/cgroup/memory", "cgroup", "cgroup", {"rw", "memory"}},
  };
  return m;
}

void check_proc_cgroup(std::string_view text) {
  std::vector<CgroupEntry> entries;
  std::string err;
  if (!parse_proc_cgroup(text, &entries, &err)) return CHECK(!err.empty());
  for (const CgroupEntry& e : entries) {
    CHECK(e.hierarchy_id >= 0);
    CHECK(!e.path.empty() && e.path[0] == '/');
    for (const std::string& c : e.controllers) CHECK(c.find(',') == std::string::npos);
  }
  check_locate(entries, typical_mounts());
}

void check_mountinfo(std::string_view text) {
  std::vector<MountInfo> mounts;
  std::string err;
  if (!parse_mountinfo(text, &mounts, &err)) return CHECK(!err.empty());
  for (const MountInfo& m : mounts) {
    CHECK(!m.mount_point.empty() && m.mount_point[0] == '/');
    CHECK(!m.fstype.empty());
    std::optional<std::uint64_t> bytes;
    if (!parse_size_option(m.super_options, &bytes, &err)) CHECK(!err.empty());
  }
  check_locate({{0, {}, "/"}, {4, {"cpu"}, "/a/b"}, {5, {"memory"}, "/../x"}}, mounts);
}

// A /proc/self/cgroup and a mountinfo, separated by a line "--".
void check_locate_both(std::string_view text) {
  std::size_t sep = text.find("\n--\n");
  if (sep == text.npos) return;
  std::vector<CgroupEntry> entries;
  std::vector<MountInfo> mounts;
  std::string err;
  if (parse_proc_cgroup(text.substr(0, sep), &entries, &err) &&
      parse_mountinfo(text.substr(sep + 4), &mounts, &err))
    check_locate(entries, mounts);
}

void check_meminfo(std::string_view text) {
  std::map<std::string, std::uint64_t> fields;
  std::string err;
  if (!parse_meminfo(text, &fields, &err)) return CHECK(!err.empty());
  for (const auto& [key, value] : fields) CHECK(!key.empty());
}

void check_size_option(std::string_view text) {
  std::vector<std::string> options;
  for (std::size_t i = 0; i <= text.size();) {
    std::size_t comma = std::min(text.find(',', i), text.size());
    options.emplace_back(text.substr(i, comma - i));
    i = comma + 1;
  }
  std::optional<std::uint64_t> bytes;
  std::string err;
  if (!parse_size_option(options, &bytes, &err)) CHECK(!err.empty());
}

void check_environ(std::string_view text) {
  for (const auto& [k, v] : parse_environ(text)) {
    CHECK(!k.empty() && k.find('=') == std::string::npos);
    CHECK(k.find('\0') == std::string::npos && v.find('\0') == std::string::npos);
  }
  for (const auto& [k, v] : parse_key_values(text)) CHECK(!k.empty() && k[0] != '#');
}

void check_torch_version(std::string_view text) {
  TorchVersionFile file;
  std::string err;
  if (!parse_torch_version_py(text, &file, &err)) return CHECK(!err.empty());
  CHECK(!file.version.empty() && file.version.size() <= 128 && printable(file.version));
  CHECK(file.version.find_first_of("'\"") == std::string::npos);
  if (file.cuda) CHECK(!file.cuda->empty() && printable(*file.cuda));
}

void check_small(std::string_view text) {
  std::string_view t = trim(text);
  CHECK(t.empty() || (t.data() >= text.data() && t.data() + t.size() <= text.data() + text.size()));
  CHECK(unescape_octal(text).size() <= text.size());
  if (auto v = proc_status_field(text, "Cpus_allowed_list")) CHECK(v->find('\n') == std::string::npos);
  if (auto kind = container_hint(text)) CHECK(!kind->empty());
  CHECK(!container_kind(text).empty());
  if (auto pci = sysfs_pci_address(text)) {
    CHECK(pci->size() >= 12 && pci->size() <= 16 && sysfs_pci_address(*pci) == pci);
  }
  std::optional<std::uint64_t> memlock;
  std::string err;
  if (!parse_limit(text, "Max locked memory", &memlock, &err)) CHECK(!err.empty());
  {
    std::size_t cut = text.find('|');
    std::string_view a = text.substr(0, cut), b = cut == text.npos ? "" : text.substr(cut + 1);
    auto level = pci_topology(a, b, 0, 1);
    CHECK(level == pci_topology(b, a, 1, 0));
  }
  std::optional<int> node;
  if (parse_numa_node(text, &node, &err)) CHECK(!node || *node >= 0);
  else CHECK(!err.empty());
  std::size_t nl = text.find('\n');
  interface_up(text.substr(0, nl), nl == text.npos ? std::nullopt
                                                   : std::optional(text.substr(nl + 1)));
}

void check_record(std::string_view text) {
  std::vector<std::string> paths = parse_record_paths(text);
  CHECK(paths.size() <= static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
  for (const auto& p : paths) CHECK(!p.empty() && p.find('\n') == std::string::npos);
  if (auto name = dist_info_name(text)) {
    CHECK(!name->empty() && name->find('-') == std::string::npos &&
          name->find('/') == std::string::npos);
    CHECK(dist_info_name(*name + "-1.0.dist-info") == name);
  }
}

struct Target {
  char tag;
  void (*check)(std::string_view);
};

constexpr Target kTargets[] = {
    {'c', check_cpu_list},     {'m', check_cpu_max},      {'q', check_cfs},
    {'l', check_memory_limit}, {'g', check_proc_cgroup},  {'i', check_mountinfo},
    {'L', check_locate_both},  {'n', check_meminfo},      {'s', check_size_option},
    {'e', check_environ},      {'v', check_torch_version}, {'x', check_small},
    {'r', check_record},
};

}  // namespace
}  // namespace gpuenv

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using gpuenv::kTargets;
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const gpuenv::Target* target = &kTargets[data[0] % std::size(kTargets)];
  for (const auto& t : kTargets)
    if (t.tag == static_cast<char>(data[0])) target = &t;
  target->check(text);
  return 0;
}
