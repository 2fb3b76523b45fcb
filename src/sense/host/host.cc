// sense_host: CPUs, cgroup limits, memory, NUMA, /dev/shm, container,
// device nodes, InfiniBand and network interfaces (docs/host-sensing.md).
//
// Files are read under SenseOptions::root. What only a system call can tell
// (gethostname, sched_getaffinity, getrlimit, statvfs, hwloc, getenv) is asked only
// when root is "/"; under any other root the same facts come from the
// files that mirror them, so tests of a fake tree cover the same logic:
//   hostname     gethostname(2)       <root>/proc/sys/kernel/hostname
//   affinity     sched_getaffinity(2) <root>/proc/self/status Cpus_allowed_list
//   memlock      getrlimit(2)         <root>/proc/self/limits Max locked memory
//   /dev/shm     statvfs(3)           tmpfs size= in <root>/proc/self/mountinfo
//   (writable)   mkstemp(3)           not tried
//   environment  getenv(3)            <root>/proc/self/environ
// At "/" the files remain the fallback when a call fails. NUMA nodes come
// from <root>/sys/devices/system/node/node* everywhere; hwloc is asked only
// at "/" when those are missing.
#include <fcntl.h>
#include <hwloc.h>
#include <limits.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "sys/fs.h"
#include "sense/host/host_parse.h"
#include "sense/host/node_name.h"
#include "sense/sense.h"
#include "sense/trace.h"

namespace gpuenv {

namespace {

constexpr char kFixMount[] =
    "Run gpuenv where /proc and /sys are mounted (they are in ordinary "
    "containers), or on the host.";
constexpr char kFixFormat[] =
    "gpuenv does not understand this file; please report it with the "
    "file's contents.";
constexpr char kFixCgroup[] =
    "Mount the cgroup filesystem at /sys/fs/cgroup (container runtimes do "
    "by default) so gpuenv can see CPU and memory limits.";
constexpr char kFixShm[] =
    "Mount a tmpfs at /dev/shm; in Docker, size it with --shm-size (the "
    "64 MiB default is too small for PyTorch DataLoader workers).";

// What one sense_host run reads from and writes to.
struct Ctx {
  std::string root;
  bool live = false;  // root is "/": system calls describe the same system
  Host* host = nullptr;
  std::map<std::string, std::string> environ;  // fake roots only
  std::vector<CgroupEntry> cgroups;
  std::vector<MountInfo> mounts;
  bool mounts_ok = false;

  std::string at(const std::string& path) const { return fs::under(root, path); }

  void problem(std::string code, std::string message, std::string fix) const {
    host->problems.push_back(
        {"host", std::move(code), std::move(message), std::move(fix)});
  }

  std::optional<std::string> env(const char* name) const {
    if (live) {
      const char* v = std::getenv(name);
      return v ? std::optional<std::string>(v) : std::nullopt;
    }
    auto it = environ.find(name);
    return it == environ.end() ? std::nullopt : std::optional(it->second);
  }
};

// Reads `path` under the root; on failure records `code`.
std::optional<std::string> read_or_report(const Ctx& ctx,
                                          const std::string& path,
                                          const char* code, const char* fix) {
  std::string text, err;
  if (fs::read_file(ctx.at(path), &text, &err)) return text;
  ctx.problem(code, err, fix);
  return std::nullopt;
}

// Reads `path` under the root: nullopt, and no error, when it is absent.
bool read_optional(const Ctx& ctx, const std::string& path,
                   std::optional<std::string>* text, std::string* err) {
  std::string real = ctx.at(path), t;
  if (!fs::exists(real)) return text->reset(), true;
  if (!fs::read_file(real, &t, err)) return false;
  *text = std::move(t);
  return true;
}

// The trimmed contents of a small file, or nullopt when unreadable.
std::optional<std::string> read_value(const Ctx& ctx, const std::string& path) {
  std::string text, err;
  if (!fs::read_file(ctx.at(path), &text, &err)) return std::nullopt;
  return std::string(trim(text));
}

// --- hostname, CPUs -------------------------------------------------------

void sense_hostname(const Ctx& ctx) {
  if (ctx.live) {
    if (std::string name = host_name(); !name.empty()) {
      ctx.host->hostname = name;
      return;
    }
  }
  auto text = read_or_report(ctx, "/proc/sys/kernel/hostname",
                             "host_hostname_unknown", kFixMount);
  if (text && !trim(*text).empty()) ctx.host->hostname = std::string(trim(*text));
}

// The machine's model (DMI); no problem when absent: ARM boards and some
// VMs have no DMI.
void sense_product_name(const Ctx& ctx) {
  std::optional<std::string> name = read_value(ctx, "/sys/class/dmi/id/product_name");
  if (name && !name->empty()) ctx.host->product_name = std::move(name);
}

// A non-empty CPU list from a file, or nullopt with *err.
std::optional<std::vector<int>> cpu_list(std::string_view text,
                                         const std::string& what,
                                         std::string* err) {
  std::vector<int> cpus;
  if (!parse_cpu_list(text, &cpus, err)) return *err = what + ": " + *err, std::nullopt;
  if (cpus.empty()) return *err = what + ": no CPUs listed", std::nullopt;
  return cpus;
}

void sense_online_cpus(const Ctx& ctx) {
  const std::string path = "/sys/devices/system/cpu/online";
  std::string text, err;
  std::optional<std::vector<int>> cpus;
  if (fs::read_file(ctx.at(path), &text, &err)) cpus = cpu_list(text, path, &err);
  if (cpus) {
    ctx.host->online_cpus = static_cast<int>(cpus->size());
  } else if (long n = ctx.live ? sysconf(_SC_NPROCESSORS_ONLN) : 0; n > 0) {
    ctx.host->online_cpus = static_cast<int>(n);
  } else {
    ctx.problem("host_online_cpus_unknown", err, kFixMount);
  }
}

std::optional<std::vector<int>> affinity_syscall(std::string* err) {
  std::vector<unsigned long> mask(kMaxCpus / (8 * sizeof(unsigned long)));
  std::size_t bytes = mask.size() * sizeof(unsigned long);
  auto* set = reinterpret_cast<cpu_set_t*>(mask.data());
  if (sched_getaffinity(0, bytes, set) != 0)
    return *err = fs::errno_text("sched_getaffinity"), std::nullopt;
  std::vector<int> cpus;
  for (int c = 0; c < kMaxCpus; ++c)
    if (CPU_ISSET_S(c, bytes, set)) cpus.push_back(c);
  if (cpus.empty()) return *err = "sched_getaffinity: no CPUs", std::nullopt;
  return cpus;
}

std::optional<std::vector<int>> affinity_from_status(const Ctx& ctx,
                                                     std::string* err) {
  const std::string path = "/proc/self/status";
  std::string text;
  if (!fs::read_file(ctx.at(path), &text, err)) return std::nullopt;
  auto list = proc_status_field(text, "Cpus_allowed_list");
  if (!list) return *err = path + ": no Cpus_allowed_list", std::nullopt;
  return cpu_list(*list, path + " Cpus_allowed_list", err);
}

void sense_affinity(const Ctx& ctx) {
  std::string err;
  std::optional<std::vector<int>> cpus;
  if (ctx.live) cpus = affinity_syscall(&err);
  if (!cpus) cpus = affinity_from_status(ctx, &err);
  if (cpus) ctx.host->affinity_cpus = std::move(cpus);
  else ctx.problem("host_affinity_unknown", err, kFixMount);
}

// --- physical cores ---------------------------------------------------------

// The affinity's CPUs grouped into physical cores by their SMT siblings
// (sysfs thread_siblings_list); nullopt when any CPU's list is unreadable.
std::optional<std::vector<std::vector<int>>> cores_of(const Ctx& ctx, const std::vector<int>& cpus) {
  std::map<int, std::vector<int>> cores;  // first sibling -> CPUs in the affinity
  for (int cpu : cpus) {
    std::string path = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) +
                       "/topology/thread_siblings_list", text, err;
    std::vector<int> siblings;
    if (!fs::read_file(ctx.at(path), &text, &err) || !parse_cpu_list(text, &siblings, &err) ||
        siblings.empty())
      return std::nullopt;
    cores[*std::min_element(siblings.begin(), siblings.end())].push_back(cpu);
  }
  std::vector<std::vector<int>> out;
  for (auto& [first, mine] : cores) out.push_back(std::move(mine));
  std::sort(out.begin(), out.end());
  return out;
}

void sense_cpu_cores(const Ctx& ctx) {
  if (ctx.host->affinity_cpus) ctx.host->cpu_cores = cores_of(ctx, *ctx.host->affinity_cpus);
}

// --- cgroups ----------------------------------------------------------------

void load_proc_self(Ctx& ctx) {
  std::string err;
  if (auto text = read_or_report(ctx, "/proc/self/cgroup", "host_cgroup_unknown", kFixMount);
      text && !parse_proc_cgroup(*text, &ctx.cgroups, &err))
    ctx.problem("host_cgroup_unknown", "/proc/self/cgroup: " + err, kFixFormat);
  if (auto text = read_or_report(ctx, "/proc/self/mountinfo", "host_mountinfo_unknown", kFixMount)) {
    ctx.mounts_ok = parse_mountinfo(*text, &ctx.mounts, &err);
    if (!ctx.mounts_ok)
      ctx.problem("host_mountinfo_unknown", "/proc/self/mountinfo: " + err, kFixFormat);
  }
}

// The CPU limit set in one cgroup directory (nullopt: none there).
bool cpu_limit_in(const Ctx& ctx, int version, const std::string& dir,
                  std::optional<double>* cpus, std::string* err) {
  std::string path = dir + (version == 2 ? "/cpu.max" : "/cpu.cfs_quota_us");
  std::optional<std::string> quota, period;
  if (!read_optional(ctx, path, &quota, err)) return false;
  if (version == 1 && !read_optional(ctx, dir + "/cpu.cfs_period_us", &period, err))
    return false;
  cpus->reset();
  if (!quota || (version == 1 && !period)) return true;
  bool ok = version == 2 ? parse_cpu_max(*quota, cpus, err)
                         : parse_cfs_quota(*quota, *period, cpus, err);
  if (!ok) *err = path + ": " + *err;
  return ok;
}

// The memory limit set in one cgroup directory (nullopt: none there).
bool memory_limit_in(const Ctx& ctx, int version, const std::string& dir,
                     std::optional<std::uint64_t>* bytes, std::string* err) {
  std::string path = dir + (version == 2 ? "/memory.max" : "/memory.limit_in_bytes");
  std::optional<std::string> text;
  if (!read_optional(ctx, path, &text, err)) return false;
  if (!text) return bytes->reset(), true;
  if (parse_memory_limit(*text, bytes, err)) return true;
  *err = path + ": " + *err;
  return false;
}

template <typename T>
using LimitIn = bool (*)(const Ctx&, int, const std::string&, std::optional<T>*,
                         std::string*);

// The tightest limit along the cgroup's chain of directories.
template <typename T>
std::optional<T> tightest(const Ctx& ctx, const CgroupLocation& loc,
                          LimitIn<T> limit_in, const char* code) {
  std::optional<T> best;
  for (const std::string& dir : loc.dirs) {
    std::optional<T> v;
    std::string err;
    if (!limit_in(ctx, loc.version, dir, &v, &err)) ctx.problem(code, err, kFixFormat);
    else if (v && (!best || *v < *best)) best = v;
  }
  return best;
}

void sense_cgroup_limits(const Ctx& ctx) {
  if (ctx.cgroups.empty() || !ctx.mounts_ok) return;  // reported already
  auto cpu = locate_cgroup(ctx.cgroups, ctx.mounts, "cpu");
  auto memory = locate_cgroup(ctx.cgroups, ctx.mounts, "memory");
  if (cpu)
    ctx.host->cgroup_cpu_quota =
        tightest<double>(ctx, *cpu, cpu_limit_in, "host_cgroup_cpu_unreadable");
  if (memory)
    ctx.host->cgroup_memory_limit_bytes = tightest<std::uint64_t>(
        ctx, *memory, memory_limit_in, "host_cgroup_memory_unreadable");
  std::string missing = !cpu && !memory ? "cpu and memory controllers"
                        : !cpu          ? "cpu controller"
                                        : "memory controller";
  if (!cpu || !memory)
    ctx.problem("host_cgroup_not_mounted",
                "/proc/self/mountinfo: no cgroup mount has the " + missing, kFixCgroup);
}

// --- memory, usable CPUs --------------------------------------------------

void sense_memory_total(const Ctx& ctx) {
  auto text = read_or_report(ctx, "/proc/meminfo", "host_meminfo_unknown", kFixMount);
  if (!text) return;
  std::map<std::string, std::uint64_t> fields;
  std::string err;
  if (!parse_meminfo(*text, &fields, &err))
    ctx.problem("host_meminfo_unknown", "/proc/meminfo: " + err, kFixFormat);
  else if (auto it = fields.find("MemTotal"); it != fields.end())
    ctx.host->memory_total_bytes = it->second;
  else
    ctx.problem("host_meminfo_unknown", "/proc/meminfo: no MemTotal", kFixFormat);
}

void compute_usable_cpus(Host* h) {
  std::optional<int> cpus = h->online_cpus;
  if (h->affinity_cpus) cpus = static_cast<int>(h->affinity_cpus->size());
  if (!cpus) return;
  if (const auto& q = h->cgroup_cpu_quota; q && *q < *cpus)
    cpus = std::max(1, static_cast<int>(std::ceil(*q - 1e-9)));
  h->usable_cpus = cpus;
}

// --- NUMA -----------------------------------------------------------------

NumaNode numa_node_of(hwloc_obj_t obj) {
  NumaNode node;
  node.index = obj->os_index == HWLOC_UNKNOWN_INDEX
                   ? static_cast<int>(obj->logical_index)
                   : static_cast<int>(obj->os_index);
  if (obj->cpuset)
    for (int c = hwloc_bitmap_first(obj->cpuset); c >= 0 && c < kMaxCpus;
         c = hwloc_bitmap_next(obj->cpuset, c))
      node.cpus.push_back(c);
  if (obj->attr && obj->attr->numanode.local_memory)
    node.memory_bytes = obj->attr->numanode.local_memory;
  return node;
}

bool numa_from_hwloc(std::vector<NumaNode>* nodes, std::string* err) {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0)
    return *err = fs::errno_text("hwloc_topology_init"), false;
  // Whole nodes, as sysfs and NVML report them, not only the CPUs we may use.
  hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
  // Only NUMA nodes and their CPUs: no caches, I/O or GPU plugins (the
  // cuda/nvml/opencl components would initialise the very drivers detect
  // avoids, and each costs milliseconds).
  hwloc_topology_set_all_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
  hwloc_topology_set_type_filter(topo, HWLOC_OBJ_PU, HWLOC_TYPE_FILTER_KEEP_ALL);
  hwloc_topology_set_type_filter(topo, HWLOC_OBJ_NUMANODE, HWLOC_TYPE_FILTER_KEEP_ALL);
  hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST,
                                "cuda,nvml,opencl,rsmi,levelzero,gl,pci");
  bool ok = hwloc_topology_load(topo) == 0;
  if (!ok) *err = fs::errno_text("hwloc_topology_load");
  int n = ok ? hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE) : 0;
  for (int i = 0; i < n; ++i)
    nodes->push_back(numa_node_of(hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, i)));
  hwloc_topology_destroy(topo);
  if (ok && nodes->empty()) return *err = "hwloc: no NUMA nodes", false;
  return ok;
}

bool numa_node_from_sysfs(const Ctx& ctx, int index, NumaNode* node,
                          std::string* err) {
  std::string dir = "/sys/devices/system/node/node" + std::to_string(index);
  std::string text;
  if (!fs::read_file(ctx.at(dir + "/cpulist"), &text, err)) return false;
  node->index = index;
  if (!parse_cpu_list(text, &node->cpus, err))
    return *err = dir + "/cpulist: " + *err, false;
  std::map<std::string, std::uint64_t> meminfo;
  std::string ignored;
  if (fs::read_file(ctx.at(dir + "/meminfo"), &text, &ignored) &&
      parse_meminfo(text, &meminfo, &ignored) && meminfo.count("MemTotal"))
    node->memory_bytes = meminfo["MemTotal"];
  return true;
}

// "node12" -> 12.
bool node_index(const std::string& name, int* index) {
  if (name.rfind("node", 0) != 0 || name.size() == 4) return false;
  const char* end = name.data() + name.size();
  auto [p, ec] = std::from_chars(name.data() + 4, end, *index);
  return ec == std::errc() && p == end && *index >= 0;
}

bool numa_from_sysfs(const Ctx& ctx, std::vector<NumaNode>* nodes,
                     std::string* err) {
  std::vector<std::string> names;
  if (!fs::list_dir(ctx.at("/sys/devices/system/node"), &names, err)) return false;
  for (const std::string& name : names) {
    int index = 0;
    NumaNode node;
    if (!node_index(name, &index)) continue;
    if (!numa_node_from_sysfs(ctx, index, &node, err)) return false;
    nodes->push_back(std::move(node));
  }
  std::sort(nodes->begin(), nodes->end(),
            [](const NumaNode& a, const NumaNode& b) { return a.index < b.index; });
  if (nodes->empty()) return *err = "/sys/devices/system/node: no nodes", false;
  return true;
}

// sysfs first, everywhere: two small files a node, far cheaper than
// loading even a filtered hwloc topology (docs/performance.md). Both give whole nodes (hwloc with INCLUDE_DISALLOWED)
// and the same memory (MemTotal of the node's meminfo). hwloc remains for
// a live system without /sys/devices/system/node (a kernel without NUMA).
void sense_numa(const Ctx& ctx) {
  std::string hwloc_err, sysfs_err;
  std::vector<NumaNode> nodes;
  if (numa_from_sysfs(ctx, &nodes, &sysfs_err)) {
    ctx.host->numa_nodes = std::move(nodes);
    return;
  }
  nodes.clear();
  if (ctx.live && numa_from_hwloc(&nodes, &hwloc_err)) {
    ctx.host->numa_nodes = std::move(nodes);
    return;
  }
  ctx.problem("host_numa_unknown",
              sysfs_err + (hwloc_err.empty() ? "" : "; " + hwloc_err), kFixMount);
}

// --- RLIMIT_MEMLOCK ---------------------------------------------------------

// How much memory this process may pin (RDMA registration, cudaHostAlloc
// through some paths, NCCL over InfiniBand). A fake root without
// /proc/self/limits leaves it unknown, quietly.
void sense_memlock(const Ctx& ctx) {
  struct rlimit rl;
  if (ctx.live && getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
    ctx.host->memlock_bytes = rl.rlim_cur == RLIM_INFINITY
                                  ? UINT64_MAX
                                  : static_cast<std::uint64_t>(rl.rlim_cur);
    return;
  }
  const std::string path = "/proc/self/limits";
  std::optional<std::string> text;
  std::string err;
  if (!read_optional(ctx, path, &text, &err))
    return ctx.problem("host_memlock_unknown", err, kFixMount);
  if (!text) return;
  std::optional<std::uint64_t> bytes;
  if (!parse_limit(*text, "Max locked memory", &bytes, &err))
    return ctx.problem("host_memlock_unknown", path + ": " + err, kFixFormat);
  ctx.host->memlock_bytes = bytes;
}

// --- /dev/shm -------------------------------------------------------------

void shm_from_mountinfo(const Ctx& ctx) {
  const MountInfo* shm = nullptr;
  for (const MountInfo& m : ctx.mounts)
    if (m.mount_point == "/dev/shm") shm = &m;  // the last mount shadows others
  std::optional<std::uint64_t> bytes;
  std::string err = "/proc/self/mountinfo: no /dev/shm mount";
  if (shm && shm->fstype != "tmpfs") err = "/dev/shm is " + shm->fstype + ", not tmpfs";
  if (shm && shm->fstype == "tmpfs" && parse_size_option(shm->super_options, &bytes, &err)) {
    // The kernel leaves size= out when it is the default, half of RAM.
    if (!bytes && ctx.host->memory_total_bytes)
      bytes = *ctx.host->memory_total_bytes / 2 / 4096 * 4096;
    ctx.host->shm_bytes = bytes;
    return;
  }
  ctx.problem("host_shm_unknown", err, kFixShm);
}

void sense_shm(const Ctx& ctx) {
  struct statvfs st;
  if (ctx.live) sense_shm_writable("/dev/shm", ctx.host);
  if (ctx.live && statvfs("/dev/shm", &st) == 0) {
    ctx.host->shm_bytes = static_cast<std::uint64_t>(st.f_blocks) * st.f_frsize;
  } else if (ctx.live) {
    ctx.problem("host_shm_unknown", fs::errno_text("statvfs", "/dev/shm"), kFixShm);
  } else if (ctx.mounts_ok) {
    shm_from_mountinfo(ctx);
  }
}

// --- container ------------------------------------------------------------

// Hints in the mounts a runtime makes for a container: its root filesystem
// and the files it bind-mounts over /etc.
std::optional<std::string> container_from_mounts(const Ctx& ctx) {
  for (const MountInfo& m : ctx.mounts) {
    const std::string& p = m.mount_point;
    if (p != "/" && p != "/etc/hostname" && p != "/etc/hosts" && p != "/etc/resolv.conf")
      continue;
    std::string text = m.root + " " + m.source;
    for (const std::string& o : m.super_options) text += " " + o;
    if (auto kind = container_hint(text)) return kind;
  }
  return std::nullopt;
}

// In order: Kubernetes (it runs on top of the other runtimes), the marker
// files Docker and Podman create, the `container` variable (systemd's
// convention), then names in PID 1's cgroup and in our mounts.
std::optional<std::string> detect_container(const Ctx& ctx) {
  if (ctx.env("KUBERNETES_SERVICE_HOST") ||
      fs::exists(ctx.at("/var/run/secrets/kubernetes.io")))
    return "kubernetes";
  if (fs::exists(ctx.at("/.dockerenv"))) return "docker";
  if (fs::exists(ctx.at("/run/.containerenv"))) return "podman";
  if (auto v = ctx.env("container"); v && !v->empty()) return container_kind(*v);
  std::string text, err;  // /proc/1 may be unreadable: that is fine
  if (fs::read_file(ctx.at("/proc/1/cgroup"), &text, &err))
    if (auto kind = container_hint(text)) return kind;
  return container_from_mounts(ctx);
}

// --- devices, InfiniBand, network -----------------------------------------

// "nvidia2" before "nvidia10": digit runs compare as numbers.
bool natural_less(const std::string& a, const std::string& b) {
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (!digit(a[i]) || !digit(b[j])) {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i, ++j;
      continue;
    }
    std::size_t ie = i, je = j;
    while (ie < a.size() && digit(a[ie])) ++ie;
    while (je < b.size() && digit(b[je])) ++je;
    if (ie - i != je - j) return ie - i < je - j;
    if (int c = a.compare(i, ie - i, b, j, je - j); c != 0) return c < 0;
    i = ie, j = je;
  }
  return i == a.size() && j < b.size();
}

void sense_device_nodes(const Ctx& ctx) {
  std::vector<std::string> names;
  std::string err;
  if (!fs::list_dir(ctx.at("/dev"), &names, &err)) {
    ctx.problem("host_dev_unreadable", err, kFixMount);
    return;
  }
  for (const std::string& name : names)
    if (name.rfind("nvidia", 0) == 0) ctx.host->nvidia_device_nodes.push_back("/dev/" + name);
  std::sort(ctx.host->nvidia_device_nodes.begin(), ctx.host->nvidia_device_nodes.end(),
            natural_less);
}

void sense_ib(const Ctx& ctx) {
  const std::string dir = "/sys/class/infiniband";
  std::vector<std::string> names;
  std::string err;
  if (!fs::list_dir(ctx.at(dir), &names, &err)) return;  // no RDMA devices
  for (const std::string& name : names) {
    std::string port = dir + "/" + name + "/ports/1/";
    ctx.host->ib_devices.push_back(
        {name, read_value(ctx, port + "link_layer"), read_value(ctx, port + "state")});
  }
}

NetInterface interface(const Ctx& ctx, const std::string& name) {
  std::string dir = "/sys/class/net/" + name;
  NetInterface nic;
  nic.name = name;
  auto operstate = read_value(ctx, dir + "/operstate");
  auto flags = read_value(ctx, dir + "/flags");
  if (operstate) nic.up = interface_up(*operstate, flags);
  nic.loopback = name == "lo" || read_value(ctx, dir + "/type") == "772";
  nic.virtual_device = !fs::exists(ctx.at(dir + "/device"));
  return nic;
}

void sense_net(const Ctx& ctx) {
  std::vector<std::string> names;
  std::string err;
  if (!fs::list_dir(ctx.at("/sys/class/net"), &names, &err)) {
    ctx.problem("host_net_unreadable", err, kFixMount);
    return;
  }
  for (const std::string& name : names)
    if (fs::is_dir(ctx.at("/sys/class/net/" + name)))  // not bonding_masters
      ctx.host->interfaces.push_back(interface(ctx, name));
}

Ctx make_ctx(const SenseOptions& opts, Host* host) {
  Ctx ctx;
  ctx.root = opts.root.empty() ? "/" : opts.root;
  ctx.live = ctx.root == "/";
  ctx.host = host;
  std::string text, err;
  if (!ctx.live && fs::read_file(ctx.at("/proc/self/environ"), &text, &err))
    ctx.environ = parse_environ(text);
  return ctx;
}

}  // namespace

void sense_shm_writable(const std::string& dir, Host* host) {
  std::string path = fs::join(dir, ".gpuenv-probe-XXXXXX");
  int fd = mkostemp(path.data(), O_CLOEXEC);  // O_CREAT|O_EXCL, as shm_open does
  host->shm_writable = fd >= 0;
  if (fd < 0) {
    host->shm_error = fs::errno_text("create a file in " + dir);
    return;
  }
  close(fd);
  unlink(path.c_str());
  host->shm_error.reset();
}

void sense_host(const SenseOptions& opts, Host* host) {
  *host = Host{};
  Ctx ctx = make_ctx(opts, host);
  {
    trace::Scope t("host: hostname, CPUs, cgroups, memory");
    sense_hostname(ctx);
    sense_product_name(ctx);
    sense_online_cpus(ctx);
    sense_affinity(ctx);
    sense_cpu_cores(ctx);
    load_proc_self(ctx);
    sense_cgroup_limits(ctx);
    sense_memory_total(ctx);
    compute_usable_cpus(host);
  }
  {
    trace::Scope t("host: NUMA nodes");
    sense_numa(ctx);
  }
  trace::Scope t("host: memlock, shm, container, devices, network");
  sense_memlock(ctx);
  sense_shm(ctx);
  host->container = detect_container(ctx);
  sense_device_nodes(ctx);
  sense_ib(ctx);
  sense_net(ctx);
}

}  // namespace gpuenv
