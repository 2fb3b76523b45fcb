#include "decide/fleet/attribute.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <vector>

#include "sys/text.h"

namespace gpuenv::fleet {
namespace {

constexpr std::size_t kMaxLabelBytes = 128;
constexpr std::size_t kMaxJobIdBytes = 64;
constexpr std::size_t kMaxPodUidBytes = 64;
constexpr std::size_t kMaxPodHostnameBytes = 63;  // the kubelet cuts a pod's hostname here
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// --- safe label values ---

// The length of the UTF-8 character starting at s[i] (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF); 0 when none starts there.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  std::size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
  if (n == 0 || c > 0xF4 || i + n > s.size()) return 0;
  unsigned char second = static_cast<unsigned char>(s[i + 1]);
  unsigned lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
  unsigned hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
  if (second < lo || second > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  return n;
}

// Whether the character s[i, i+n) is a control: C0, DEL, or C1 (U+0080-U+009F).
bool is_control(std::string_view s, std::size_t i, std::size_t n) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (n == 1) return c < 0x20 || c == 0x7F;
  return n == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0;
}

// `s` as a label value: every byte that is not valid UTF-8 and every control
// character made U+FFFD, cut to kMaxLabelBytes on a character's boundary.
std::string label_value(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size() && out.size() <= kMaxLabelBytes;) {
    std::size_t n = utf8_length(s, i);
    if (n == 0 || is_control(s, i, n)) out += kReplacement;
    else out += s.substr(i, n);
    i += n == 0 ? 1 : n;
  }
  return std::string(utf8_prefix(out, kMaxLabelBytes));
}

// A scheduler's job id: 1 to 64 bytes of [A-Za-z0-9_.+-].
bool is_job_id(std::string_view s) {
  if (s.empty() || s.size() > kMaxJobIdBytes) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '+' || c == '-';
  });
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// --- cgroup paths ---

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// What follows `prefix` in `s`, when `s` starts with it.
std::optional<std::string_view> after(std::string_view s, std::string_view prefix) {
  if (!starts_with(s, prefix)) return std::nullopt;
  return s.substr(prefix.size());
}

// A cgroup path cut at its '/'s, each part a view into the path.
struct Parts {
  std::string_view path;
  std::vector<std::string_view> parts;
  // The path up to and including part i.
  std::string upto(std::size_t i) const {
    return std::string(path.substr(0, static_cast<std::size_t>(parts[i].data() - path.data()) + parts[i].size()));
  }
};

Parts parts_of(std::string_view path) { return {path, split(path, '/')}; }

// Whether the path runs through a systemd user manager's cgroup (user@UID.service):
// that subtree is delegated to the user, who may name cgroups in it at will.
bool in_user_subtree(const Parts& p) {
  return std::any_of(p.parts.begin(), p.parts.end(), [](std::string_view c) { return starts_with(c, "user@"); });
}

std::optional<SlurmCgroup> slurm_job_at(const Parts& p, std::size_t i, std::optional<std::uint32_t> uid) {
  if (i >= p.parts.size()) return std::nullopt;
  std::optional<std::string_view> job = after(p.parts[i], "job_");
  if (!job || !all_digits(*job) || job->size() > 20) return std::nullopt;
  SlurmCgroup s{std::string(*job), "", uid, p.upto(i)};
  if (i + 1 < p.parts.size())
    if (std::optional<std::string_view> step = after(p.parts[i + 1], "step_"); step && is_job_id(*step))
      s.step = std::string(*step);
  return s;
}

std::optional<std::uint32_t> v1_uid(std::string_view part) {
  std::optional<std::string_view> digits = after(part, "uid_");
  std::uint32_t uid = 0;
  if (!digits || !all_digits(*digits)) return std::nullopt;
  auto [end, ec] = std::from_chars(digits->data(), digits->data() + digits->size(), uid);
  if (ec != std::errc() || end != digits->data() + digits->size()) return std::nullopt;
  return uid;
}

// A kubepods container's id from its cgroup's name: "cri-containerd-ID.scope",
// "crio-ID.scope", "docker-ID.scope" (systemd) or the bare id (cgroupfs).
std::string container_id(std::string_view part) {
  if (ends_with(part, ".scope")) part.remove_suffix(6);
  for (std::string_view prefix : {"cri-containerd-", "crio-", "docker-"})
    if (std::optional<std::string_view> id = after(part, prefix)) return std::string(*id);
  return std::string(part);
}

bool is_pod_uid(std::string_view uid) {
  if (uid.empty() || uid.size() > kMaxPodUidBytes) return false;
  return std::all_of(uid.begin(), uid.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-'; });
}

std::optional<KubepodsCgroup> pod_at(const Parts& p, std::size_t i, std::string uid) {
  if (!is_pod_uid(uid)) return std::nullopt;
  KubepodsCgroup k{std::move(uid), "", p.upto(i)};
  if (i + 1 < p.parts.size()) k.container_id = container_id(p.parts[i + 1]);
  return k;
}

// cgroupfs: kubepods/[burstable|besteffort/]podUID/CONTAINER, from part i on.
std::optional<KubepodsCgroup> cgroupfs_pod(const Parts& p, std::size_t i) {
  if (i < p.parts.size() && (p.parts[i] == "burstable" || p.parts[i] == "besteffort")) ++i;
  if (i >= p.parts.size()) return std::nullopt;
  std::optional<std::string_view> uid = after(p.parts[i], "pod");
  return uid ? pod_at(p, i, std::string(*uid)) : std::nullopt;
}

// systemd: kubepods.slice/[kubepods-QOS.slice/]kubepods[-QOS]-podUID_.slice/...
std::optional<KubepodsCgroup> systemd_pod(const Parts& p, std::size_t i) {
  if (i < p.parts.size() && (p.parts[i] == "kubepods-burstable.slice" || p.parts[i] == "kubepods-besteffort.slice"))
    ++i;
  if (i >= p.parts.size()) return std::nullopt;
  std::string_view name = p.parts[i];
  if (!starts_with(name, "kubepods-") || !ends_with(name, ".slice")) return std::nullopt;
  name.remove_suffix(6);
  std::optional<std::string_view> uid = after(name.substr(name.rfind('-') + 1), "pod");
  if (!uid) return std::nullopt;
  std::string dashed(*uid);
  std::replace(dashed.begin(), dashed.end(), '_', '-');
  return pod_at(p, i, std::move(dashed));
}

// --- the rules ---

std::optional<std::string_view> env(const ProcessFacts& p, const char* name) {
  auto it = p.env.find(name);
  if (it == p.env.end()) return std::nullopt;
  return it->second;
}

// The process's user: its uid's name, else the uid as digits.
std::string user_of(const ProcessFacts& p) {
  if (!p.user.empty()) return p.user;
  return p.uid ? std::to_string(*p.uid) : "";
}

// A Slurm job's user: the process's uid's name (the kernel's word, which the
// job cannot forge), else SLURM_JOB_USER (a uid with no name here: the
// exporter's container may lack the site's directory), else the uid's digits.
std::string slurm_user(const ProcessFacts& p, std::optional<std::uint32_t> cgroup_uid = std::nullopt) {
  if (!p.user.empty()) return p.user;
  if (std::optional<std::string_view> u = env(p, "SLURM_JOB_USER"); u && !u->empty()) return std::string(*u);
  if (p.uid) return std::to_string(*p.uid);
  return cgroup_uid ? std::to_string(*cgroup_uid) : "";
}

// A tree's user: its root's, else the process's.
std::string root_user(const ProcessFacts& p) {
  if (!p.root_user.empty()) return p.root_user;
  return p.root_uid ? std::to_string(*p.root_uid) : user_of(p);
}

JobOwner owner(const char* scheduler, std::string job, const char* source) {
  JobOwner o;
  o.scheduler = scheduler, o.job = std::move(job), o.source = source;
  return o;
}

std::optional<JobOwner> by_slurm_cgroup(const ProcessFacts& p) {
  std::optional<SlurmCgroup> s = slurm_cgroup(p.cgroup);
  if (!s) return std::nullopt;
  JobOwner o = owner("slurm", s->job, "cgroup");
  o.step = s->step, o.user = slurm_user(p, s->uid), o.cgroup = s->job_cgroup;
  return o;
}

std::optional<JobOwner> by_slurm_env(const ProcessFacts& p) {
  std::optional<std::string_view> job = env(p, "SLURM_JOB_ID");
  if (!job || !is_job_id(*job)) return std::nullopt;
  JobOwner o = owner("slurm", std::string(*job), "environ");
  if (std::optional<std::string_view> step = env(p, "SLURM_STEP_ID"); step && is_job_id(*step)) o.step = *step;
  o.user = slurm_user(p);
  o.root_pid = p.root_pid;  // no cgroup: its CPU is its process tree's
  return o;
}

std::optional<JobOwner> by_hpc_mapping(const ProcessFacts& p, const DeviceReading& d, const DeviceReading* parent,
                                       const HpcJobMap& hpc) {
  auto it = hpc.find(std::to_string(parent ? parent->gpu : d.gpu));
  if (it == hpc.end()) return std::nullopt;
  std::set<std::string> jobs(it->second.begin(), it->second.end());
  if (jobs.size() != 1 || !is_job_id(*jobs.begin())) return std::nullopt;
  JobOwner o = owner("slurm", *jobs.begin(), "hpc-job-mapping");
  o.user = user_of(p);
  return o;
}

// Whether a process in a pod's cgroup is in another pod than `ref`: its
// HOSTNAME (the pod's name, cut at 63 bytes) names another. A pod that set
// its own hostname (spec.hostname, hostNetwork) reads as another pod too.
bool in_another_pod(const ProcessFacts& p, const PodRef& ref) {
  std::optional<std::string_view> host = env(p, "HOSTNAME");
  if (!kubepods_cgroup(p.cgroup) || !host || host->empty()) return false;
  if (*host == ref.pod) return false;
  return !(ref.pod.size() > kMaxPodHostnameBytes && host->size() <= kMaxPodHostnameBytes &&
           starts_with(ref.pod, *host));
}

std::optional<JobOwner> by_pod(const ProcessFacts& p, const DeviceReading& d, const DeviceReading* parent,
                               const PodDevices& pods) {
  std::optional<KubepodsCgroup> k = kubepods_cgroup(p.cgroup);
  const PodRef* ref = pods.find(d, parent);
  if (ref && !in_another_pod(p, *ref)) {
    JobOwner o = owner("kubernetes", ref->ns + "/" + ref->pod, "pod-resources");
    o.ns = ref->ns, o.pod = ref->pod, o.container = ref->container;
    o.user = user_of(p), o.cgroup = k ? k->pod_cgroup : "";
    return o;
  }
  if (!k) return std::nullopt;
  JobOwner o = owner("kubernetes", "pod-" + k->pod_uid, "cgroup");
  o.pod = std::string(env(p, "HOSTNAME").value_or(""));
  o.user = user_of(p), o.cgroup = k->pod_cgroup;
  return o;
}

JobOwner tree_job(const ProcessFacts& p, std::string job, const char* source) {
  JobOwner o = owner("none", std::move(job), source);
  o.command = p.root_command, o.root_pid = p.root_pid, o.user = root_user(p);
  return o;
}

std::optional<JobOwner> by_gpuenv_job(const ProcessFacts& p) {
  std::optional<std::string_view> job = env(p, "GPUENV_JOB_ID");
  if (!job || !is_job_id(*job)) return std::nullopt;
  return tree_job(p, std::string(*job), "environ");
}

std::optional<JobOwner> by_tree(const ProcessFacts& p) {
  if (!p.found || p.root_pid == 0) return std::nullopt;
  return tree_job(p, "pid-" + std::to_string(p.root_pid), "process-tree");
}

// `o` with every text a safe label value; a cgroup that is not one already
// is dropped rather than changed (it names a directory).
JobOwner labelled(JobOwner o) {
  for (std::string* s : {&o.scheduler, &o.job, &o.user, &o.step, &o.ns, &o.pod, &o.container, &o.command, &o.source})
    *s = label_value(*s);
  if (label_value(o.cgroup) != o.cgroup) o.cgroup.clear();
  return o;
}

}  // namespace

std::optional<SlurmCgroup> slurm_cgroup(std::string_view path) {
  Parts p = parts_of(path);
  if (in_user_subtree(p)) return std::nullopt;
  for (std::size_t i = 0; i + 1 < p.parts.size(); ++i) {
    std::string_view c = p.parts[i];
    if (ends_with(c, "slurmstepd.scope")) return slurm_job_at(p, i + 1, std::nullopt);
    if ((c == "slurm" || starts_with(c, "slurm_")) && i + 2 < p.parts.size())
      if (std::optional<std::uint32_t> uid = v1_uid(p.parts[i + 1])) return slurm_job_at(p, i + 2, uid);
  }
  return std::nullopt;
}

// Seen from inside a private cgroup namespace (containerd's default on
// cgroup v2), another pod's cgroup is relative to the reader's and starts
// with "/..": "/../../kubepods-burstable.slice/kubepods-burstable-podUID.slice/
// cri-containerd-ID.scope" has lost "/kubepods.slice". A systemd slice's name
// spells its parents (a-b-c.slice is in a.slice/a-b.slice), so the pod's
// path on the host is rebuilt from it.
std::optional<KubepodsCgroup> systemd_pod_relative(const Parts& p) {
  for (std::size_t i = 0; i < p.parts.size(); ++i) {
    std::string_view name = p.parts[i];
    if (!starts_with(name, "kubepods-") || !ends_with(name, ".slice") || name.find("-pod") == std::string_view::npos)
      continue;
    std::string rebuilt = "/kubepods.slice";
    std::size_t pod = name.find("-pod");
    std::string_view qos = pod > 9 ? name.substr(9, pod - 9) : "";  // "burstable", "besteffort" or ""
    if (!qos.empty()) rebuilt += "/kubepods-" + std::string(qos) + ".slice";
    rebuilt += "/" + std::string(name);
    if (i + 1 < p.parts.size()) rebuilt += "/" + std::string(p.parts[i + 1]);
    return kubepods_cgroup(rebuilt);
  }
  return std::nullopt;
}

std::optional<KubepodsCgroup> kubepods_cgroup(std::string_view path) {
  Parts p = parts_of(path);
  if (in_user_subtree(p)) return std::nullopt;
  for (std::size_t i = 0; i < p.parts.size(); ++i) {
    if (p.parts[i] == "kubepods") return cgroupfs_pod(p, i + 1);
    if (p.parts[i] == "kubepods.slice") return systemd_pod(p, i + 1);
  }
  auto first = std::find_if(p.parts.begin(), p.parts.end(), [](std::string_view c) { return !c.empty(); });
  if (first != p.parts.end() && *first == "..") return systemd_pod_relative(p);
  return std::nullopt;
}

JobOwner attribute(const ProcessFacts& p, const DeviceReading& d, const DeviceReading* parent, const HpcJobMap& hpc,
                   const PodDevices& pods) {
  std::optional<JobOwner> o = by_slurm_cgroup(p);
  if (!o) o = by_slurm_env(p);
  if (!o) o = by_hpc_mapping(p, d, parent, hpc);
  if (!o) o = by_pod(p, d, parent, pods);
  if (!o) o = by_gpuenv_job(p);
  if (!o) o = by_tree(p);
  if (!o) {
    o = JobOwner{};
    o->user = user_of(p);
  }
  return labelled(std::move(*o));
}

}  // namespace gpuenv::fleet
