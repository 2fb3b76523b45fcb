// Pure parsers for the files sense/host/host.cc and sense/python/torch.cc read: kernel
// formats (CPU lists, cgroup files, mountinfo, meminfo, environ) and
// torch/version.py. Text in, values or an error out; no I/O, no throwing.
// Every one is fuzzed by host_parse_fuzz.cc.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sys/text.h"  // trim, split

namespace gpuenv {

/// CPU indices at or above this are rejected (Linux's NR_CPUS tops out at
/// 8192 today); it also bounds how much a hostile list can expand to.
inline constexpr int kMaxCpus = 65536;

/// Memory limits at or above this mean "no limit". cgroup v1 reports an
/// unlimited memory.limit_in_bytes as LONG_MAX rounded down to the page
/// size (9223372036854771712 with 4 KiB pages), so no exact match works.
inline constexpr std::uint64_t kUnlimitedMemory = std::uint64_t{1} << 62;

/// A kernel CPU list ("0-3,8,10-11\n", as in cpulist, cpuset.cpus,
/// Cpus_allowed_list) as sorted, unique indices. An empty list is valid (a
/// CPU-less NUMA node). False with *err on garbage, reversed ranges, indices
/// >= kMaxCpus, or ranges that add up to more than kMaxCpus CPUs.
bool parse_cpu_list(std::string_view text, std::vector<int>* cpus,
                    std::string* err);

/// The inverse of parse_cpu_list for sorted unique input: {0,1,2,3,8} ->
/// "0-3,8".
std::string format_cpu_list(const std::vector<int>& cpus);

/// cgroup v2 cpu.max ("max 100000", "150000 100000"): *cpus = quota/period
/// (1.5), nullopt for "max". The period may be omitted (default 100000).
bool parse_cpu_max(std::string_view text, std::optional<double>* cpus,
                   std::string* err);

/// cgroup v1 cpu.cfs_quota_us and cpu.cfs_period_us: *cpus = quota/period,
/// nullopt when quota is -1 (no limit).
bool parse_cfs_quota(std::string_view quota, std::string_view period,
                     std::optional<double>* cpus, std::string* err);

/// cgroup v2 memory.max or v1 memory.limit_in_bytes in bytes; nullopt for
/// "max" or any value >= kUnlimitedMemory.
bool parse_memory_limit(std::string_view text,
                        std::optional<std::uint64_t>* bytes, std::string* err);

/// One line of /proc/<pid>/cgroup: "hierarchy-ID:controller-list:path".
struct CgroupEntry {
  int hierarchy_id = 0;  // 0 for the v2 unified hierarchy
  std::vector<std::string> controllers;  // empty for v2; "name=systemd" kept
  std::string path;  // relative to the cgroup namespace root, starts with /
  friend bool operator==(const CgroupEntry&, const CgroupEntry&) = default;
};

/// All lines of /proc/<pid>/cgroup. False on any malformed line.
bool parse_proc_cgroup(std::string_view text, std::vector<CgroupEntry>* entries,
                       std::string* err);

/// One line of /proc/<pid>/mountinfo (proc(5)), octal escapes decoded.
struct MountInfo {
  int mount_id = 0, parent_id = 0;
  std::string root;         // path inside the filesystem that is mounted
  std::string mount_point;  // absolute, as the process sees it
  std::string fstype, source;
  std::vector<std::string> super_options;  // "rw", "size=65536k", "cpu"
  friend bool operator==(const MountInfo&, const MountInfo&) = default;
};

/// Decodes mountinfo's octal escapes ("\040" -> ' ', "\134" -> '\').
/// Anything else, including "\0" escapes of NUL, is kept as written.
std::string unescape_octal(std::string_view text);

/// One mountinfo line.
bool parse_mountinfo_line(std::string_view line, MountInfo* mount,
                          std::string* err);

/// All of /proc/<pid>/mountinfo. False on any malformed line, naming it.
bool parse_mountinfo(std::string_view text, std::vector<MountInfo>* mounts,
                     std::string* err);

/// Where one controller's files are for a process.
struct CgroupLocation {
  int version = 0;  // 1 or 2
  // Directories as the process sees them, the process's own cgroup first
  // and then each parent up to and including the mount point: limits are
  // the tightest along this chain.
  std::vector<std::string> dirs;
  friend bool operator==(const CgroupLocation&, const CgroupLocation&) = default;
};

/// Locates `controller` ("cpu", "memory") from /proc/self/cgroup and
/// mountinfo: a v1 hierarchy that has the controller wins over v2 (hybrid
/// mode). The directory is the mount point plus the cgroup path relative to
/// the mount's root; when the path is not below the root (a cgroup
/// namespace shows "/"; a process moved outside it shows "/.."), only the
/// mount point is used. nullopt when no mounted hierarchy matches.
std::optional<CgroupLocation> locate_cgroup(
    const std::vector<CgroupEntry>& entries,
    const std::vector<MountInfo>& mounts, std::string_view controller);

/// /proc/meminfo, or /sys/devices/system/node/nodeN/meminfo (whose "Node N "
/// prefix is dropped): field -> value, "kB" values converted to bytes.
bool parse_meminfo(std::string_view text,
                   std::map<std::string, std::uint64_t>* fields,
                   std::string* err);

/// The "size=" option of a tmpfs mount ("size=65536k") in bytes; k, m, g, t
/// suffixes. nullopt when absent; false on a malformed or overflowing value.
bool parse_size_option(const std::vector<std::string>& options,
                       std::optional<std::uint64_t>* bytes, std::string* err);

/// /proc/<pid>/environ: NUL-separated NAME=value; the first of duplicate
/// names wins (as getenv does); entries without '=' are skipped.
std::map<std::string, std::string> parse_environ(std::string_view text);

/// The value of `name` in /proc/<pid>/status ("Cpus_allowed_list:\t0-3"),
/// trimmed; nullopt when the field is absent.
std::optional<std::string> proc_status_field(std::string_view text,
                                             std::string_view name);

/// The container runtime a cgroup path or mount source names, if any:
/// "kubepods"/"kubelet" -> kubernetes, "libpod"/"containers/storage" ->
/// podman, "docker" -> docker, "containerd" -> containerd, "lxc" -> lxc,
/// checked in that order (Kubernetes runs on top of the others).
std::optional<std::string> container_hint(std::string_view text);

/// The `container` environment variable (systemd's convention) as one of
/// docker|podman|kubernetes|containerd|lxc, else "other".
std::string container_kind(std::string_view value);

/// Whether a network interface is up, from /sys/class/net/X/operstate and,
/// when that says "unknown" (loopback, tun), the IFF_UP bit of its hex
/// flags ("0x1003"). nullopt when neither tells.
std::optional<bool> interface_up(std::string_view operstate,
                                 std::optional<std::string_view> flags);

/// NVML's PCI bus id ("00000000:18:00.0": 8 hex digits of domain, upper or
/// lower case) as sysfs names the device under /sys/bus/pci/devices
/// ("0000:18:00.0": at least 4 digits of domain, lower case). nullopt when
/// it is not a PCI address.
std::optional<std::string> sysfs_pci_address(std::string_view nvml_bus_id);

/// NVML's topology level between two PCI devices, from where sysfs puts
/// them (the resolved /sys/bus/pci/devices/<address> links, e.g.
/// "/sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/0000:18:00.0") and
/// their NUMA nodes: "single" (one PCIe switch between them), "multiple"
/// (several switches, no host bridge), "hostbridge" (the same root complex),
/// "node" (different root complexes of one NUMA node) or "system" (across
/// NUMA nodes). nullopt when a path is not a PCI device path. NVML's
/// "internal" (two GPUs on one board) is reported as "single".
std::optional<std::string> pci_topology(std::string_view a, std::string_view b,
                                        std::optional<int> numa_a, std::optional<int> numa_b);

/// A device's sysfs numa_node file ("1\n"); "-1" (no NUMA affinity) gives
/// nullopt. False with *err on anything else.
bool parse_numa_node(std::string_view text, std::optional<int>* node,
                     std::string* err);

/// The soft limit of one row of /proc/<pid>/limits ("Max locked memory
/// 8388608  8388608  bytes"): "unlimited" gives UINT64_MAX (RLIM_INFINITY).
/// False with *err when the row is missing or its soft limit not a number.
bool parse_limit(std::string_view text, std::string_view name,
                 std::optional<std::uint64_t>* soft, std::string* err);

/// "key = value" lines (pyvenv.cfg); '#' comments and other lines skipped.
std::map<std::string, std::string> parse_key_values(std::string_view text);

/// What torch/version.py says.
struct TorchVersionFile {
  std::string version;              // __version__, "2.11.0+cu130"
  std::optional<std::string> cuda;  // cuda, "13.0"; nullopt for None
  friend bool operator==(const TorchVersionFile&, const TorchVersionFile&) = default;
};

/// torch/version.py: `__version__ = '2.11.0+cu130'` and
/// `cuda: Optional[str] = '13.0'` (or `cuda = None`). Simple assignments
/// only, the last one winning; nothing is evaluated. False when __version__
/// is missing or either value is not a plain string literal (or None for
/// cuda), or contains characters outside printable ASCII.
bool parse_torch_version_py(std::string_view text, TorchVersionFile* file,
                            std::string* err);

/// The paths a wheel's *.dist-info/RECORD lists, relative to site-packages:
/// the first CSV field of each line ("flash_attn_2_cuda.so,sha256=...,4096"),
/// which may be quoted ("\"a,b.so\"", with "" for a quote). Lines that are
/// empty, or whose quoted field never closes, are skipped.
std::vector<std::string> parse_record_paths(std::string_view text);

/// The distribution a *.dist-info directory belongs to:
/// "flash_attn-2.7.4.post1.dist-info" -> "flash_attn". nullopt unless the
/// name is NAME-VERSION.dist-info with a NAME of letters, digits, '_' and '.'.
std::optional<std::string> dist_info_name(std::string_view dir);

}  // namespace gpuenv
