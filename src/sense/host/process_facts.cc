#include "sense/host/process_facts.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <deque>
#include <map>
#include <optional>
#include <set>

#include "sense/host/proc_parse.h"
#include "sense/host/proc_tree.h"
#include "sys/fs.h"

namespace gpuenv {
namespace {

constexpr std::size_t kMaxProcFileBytes = 64 << 10;
// A job's environment (module systems, exported shell functions) often
// passes 64 KiB, and slurmstepd appends SLURM_* after the user's own.
constexpr std::size_t kMaxEnvironBytes = 1 << 20;
constexpr std::size_t kMaxCommBytes = 256;
constexpr int kMaxCgroupDepth = 32;
constexpr std::size_t kMaxCgroupDirs = 4096;
constexpr std::size_t kMaxMappingBytes = 64 << 10;
constexpr std::size_t kMaxMappingFiles = 256;

// At most `cap` bytes of `path`; a longer file is cut back to just after its
// last `end` byte within the cap, so that a cut never leaves half a line or
// half an entry. nullopt when it cannot be read (gone, not a regular file).
std::optional<std::string> read_capped(const std::string& path, std::size_t cap, char end) {
  std::string text, err;
  if (!fs::read_head(path, cap + 1, &text, &err)) return std::nullopt;
  if (text.size() <= cap) return text;
  std::size_t last = text.rfind(end, cap - 1);
  text.resize(last == std::string::npos ? 0 : last + 1);
  return text;
}

std::optional<std::string> read_small(const std::string& path) { return read_capped(path, kMaxProcFileBytes, '\n'); }

std::string pid_path(const ProcessReadOptions& o, std::uint32_t pid, const char* file) {
  return o.proc_root + "/" + std::to_string(pid) + "/" + file;
}

std::optional<ProcStat> stat_of(const ProcessReadOptions& o, std::uint32_t pid) {
  std::optional<std::string> text = read_small(pid_path(o, pid, "stat"));
  ProcStat s;
  std::string err;
  if (!text || !parse_proc_stat(*text, &s, &err) || s.pid != static_cast<int>(pid)) return std::nullopt;
  return s;
}

ProcStatus status_of(const ProcessReadOptions& o, std::uint32_t pid) {
  std::optional<std::string> text = read_small(pid_path(o, pid, "status"));
  return text ? parse_proc_status(*text) : ProcStatus{};
}

// /proc/PID/comm without its newline; the stat's comm when it cannot be read.
std::string comm_of(const ProcessReadOptions& o, const ProcStat& s) {
  std::optional<std::string> text = read_capped(pid_path(o, s.pid, "comm"), kMaxCommBytes, '\n');
  if (!text || text->empty()) return s.comm;
  if (text->back() == '\n') text->pop_back();
  return *text;
}

// uid -> user name lookups, each uid asked once (NSS may be a network away).
class UserNames {
 public:
  std::string name(std::uint32_t uid) {
    auto [it, added] = names_.try_emplace(uid);
    if (added) it->second = lookup(uid);
    return it->second;
  }

 private:
  static std::string lookup(std::uint32_t uid) {
    long hint = sysconf(_SC_GETPW_R_SIZE_MAX);
    std::vector<char> buf(hint > 0 ? static_cast<std::size_t>(hint) : 16384);
    struct passwd pw, *found = nullptr;
    int rc = 0;
    while ((rc = getpwuid_r(uid, &pw, buf.data(), buf.size(), &found)) == ERANGE && buf.size() < (1u << 20))
      buf.resize(buf.size() * 2);
    return rc == 0 && found && found->pw_name ? found->pw_name : "";
  }
  std::map<std::uint32_t, std::string> names_;
};

// ProcessFacts::root_pid of the process `self`: up through parents in its
// session, stopping below the session leader, PID 1, `gpuenv run`, a loop,
// a parent that cannot be read, or after kMaxAncestors.
std::uint32_t tree_root(const ProcessReadOptions& o, const ProcStat& self) {
  ProcStat cur = self;
  std::set<int> seen = {cur.pid};
  for (int hop = 0; hop < kMaxAncestors; ++hop) {
    if (cur.pid == cur.session || cur.ppid <= 1) break;
    std::optional<ProcStat> parent = stat_of(o, static_cast<std::uint32_t>(cur.ppid));
    if (!parent || !seen.insert(parent->pid).second || parent->comm == "gpuenv") break;
    if (parent->session != cur.session || parent->pid == parent->session) break;
    cur = std::move(*parent);
  }
  return static_cast<std::uint32_t>(cur.pid);
}

void read_root(const ProcessReadOptions& o, const ProcStat& self, UserNames* users, ProcessFacts* f) {
  f->root_pid = tree_root(o, self);
  std::optional<ProcStat> root = f->root_pid == static_cast<std::uint32_t>(self.pid) ? self : stat_of(o, f->root_pid);
  if (root) f->root_command = comm_of(o, *root);
  f->root_uid = status_of(o, f->root_pid).uid;
  if (f->root_uid) f->root_user = users->name(*f->root_uid);
}

ProcessFacts facts_of(std::uint32_t pid, const ProcessReadOptions& o, UserNames* users) {
  ProcessFacts f;
  f.pid = pid;
  if (!plausible_pid(pid) || !fs::is_dir(o.proc_root + "/" + std::to_string(pid))) return f;
  f.found = true;
  f.uid = status_of(o, pid).uid;
  if (f.uid) f.user = users->name(*f.uid);
  if (std::optional<std::string> text = read_small(pid_path(o, pid, "cgroup"))) {
    ProcCgroup cg = parse_proc_cgroup(*text);
    f.cgroup = std::move(cg.path), f.cgroup_version = cg.version;
  }
  if (std::optional<std::string> env = read_capped(pid_path(o, pid, "environ"), kMaxEnvironBytes, '\0'))
    f.env = parse_attribution_env(*env);
  if (std::optional<ProcStat> s = stat_of(o, pid)) read_root(o, *s, users, &f);
  return f;
}

// --- a job's CPU ---

double clock_ticks_per_second() { return double(std::max(1L, sysconf(_SC_CLK_TCK))); }

// The stats of this round already read (ProcessReader), by PID; a PID not
// in it is read.
using KnownStats = std::map<std::uint32_t, ProcStat>;

std::optional<ProcStat> stat_now(const ProcessReadOptions& o, std::uint32_t pid, const KnownStats* known) {
  if (known)
    if (auto it = known->find(pid); it != known->end()) return it->second;
  return stat_of(o, pid);
}

// The CPU seconds of each of `pids` that can be read, at most kMaxJobProcesses.
std::vector<std::pair<std::uint32_t, double>> processes_cpu(const std::vector<int>& pids, const ProcessReadOptions& o,
                                                            const KnownStats* known = nullptr) {
  std::vector<std::pair<std::uint32_t, double>> out;
  std::set<int> seen;
  double hz = clock_ticks_per_second();
  for (int pid : pids) {
    if (out.size() >= kMaxJobProcesses) break;
    if (!seen.insert(pid).second) continue;
    if (std::optional<ProcStat> s = stat_now(o, static_cast<std::uint32_t>(pid), known))
      out.emplace_back(static_cast<std::uint32_t>(pid), double(s->utime + s->stime) / hz);
  }
  return out;
}

std::optional<double> total(const std::vector<std::pair<std::uint32_t, double>>& processes) {
  if (processes.empty()) return std::nullopt;
  double sum = 0;
  for (const auto& p : processes) sum += p.second;
  return sum;
}

std::optional<double> tightest(std::optional<double> a, std::optional<double> b) {
  if (a && b) return std::min(*a, *b);
  return a ? a : b;
}

// `cgroup` ("/a/b", relative to a cgroup root) without trailing slashes, or
// nullopt when it is not a plain absolute path ("..", ".", a NUL).
std::optional<std::string> plain_cgroup(const std::string& cgroup) {
  if (cgroup.empty() || cgroup[0] != '/' || cgroup.find('\0') != std::string::npos) return std::nullopt;
  for (std::size_t i = 0; i < cgroup.size();) {
    std::size_t end = std::min(cgroup.find('/', i), cgroup.size());
    std::string part = cgroup.substr(i, end - i);
    if (part == "." || part == "..") return std::nullopt;
    i = end + 1;
  }
  std::string out = cgroup;
  while (!out.empty() && out.back() == '/') out.pop_back();
  return out;
}

// "/a/b" -> {"/a/b", "/a", ""}: the cgroup and each above it, the root last.
std::vector<std::string> self_and_ancestors(std::string cgroup) {
  std::vector<std::string> out = {cgroup};
  while (!cgroup.empty()) {
    cgroup.resize(cgroup.rfind('/'));
    out.push_back(cgroup);
  }
  return out;
}

// The cgroup directory `dir` and every cgroup under it, breadth first: at
// most kMaxCgroupDepth levels and kMaxCgroupDirs directories.
std::vector<std::string> cgroup_dirs(const std::string& dir) {
  std::vector<std::string> out;
  std::deque<std::pair<std::string, int>> todo = {{dir, 0}};
  while (!todo.empty() && out.size() < kMaxCgroupDirs) {
    auto [d, depth] = std::move(todo.front());
    todo.pop_front();
    std::vector<std::string> names;
    std::string err;
    if (depth < kMaxCgroupDepth && fs::list_subdirs(d, &names, &err))
      for (const std::string& n : names) todo.emplace_back(d + "/" + n, depth + 1);
    out.push_back(std::move(d));
  }
  return out;
}

// What ProcessReader remembers for one job's read: this round's stats, and
// the job cgroup's directories (listed when `dirs` is empty, taken as they
// are when not).
struct Remembered {
  const KnownStats* stats = nullptr;
  std::vector<std::string>* dirs = nullptr;
};

// The PIDs in the cgroup directory `dir` and every cgroup under it: at most
// kMaxJobProcesses.
std::vector<int> cgroup_pids(const std::string& dir, Remembered r) {
  std::vector<std::string> listed;
  std::vector<std::string>& dirs = r.dirs ? *r.dirs : listed;
  if (dirs.empty()) dirs = cgroup_dirs(dir);
  std::vector<int> pids;
  for (const std::string& d : dirs) {
    if (pids.size() >= kMaxJobProcesses) break;
    if (std::optional<std::string> procs = read_small(d + "/cgroup.procs"))
      for (int pid : parse_pid_list(*procs)) pids.push_back(pid);
  }
  if (pids.size() > kMaxJobProcesses) pids.resize(kMaxJobProcesses);
  return pids;
}

// The tightest quota of the cgroup and those above it, in cores, under the
// hierarchy mounted at `mount` (`quota` reads one cgroup's directory).
template <typename Quota>
std::optional<double> tightest_quota(const std::string& mount, const std::string& cgroup, Quota quota) {
  std::optional<double> out;
  for (const std::string& c : self_and_ancestors(cgroup)) out = tightest(out, quota(mount + c));
  return out;
}

// The CPU count of the nearest cpuset list (`file`) at or above the cgroup.
std::optional<double> cpuset_cores(const std::string& mount, const std::string& cgroup, const char* file) {
  for (const std::string& c : self_and_ancestors(cgroup))
    if (std::optional<std::string> text = read_small(mount + c + "/" + file))
      if (std::optional<int> n = cpu_list_count(*text)) return double(*n);
  return std::nullopt;
}

std::optional<double> v2_quota(const std::string& dir) {
  std::optional<std::string> text = read_small(dir + "/cpu.max");
  return text ? parse_cpu_max(*text) : std::nullopt;
}

// A one-integer file's positive value; nullopt otherwise (-1: no limit).
std::optional<double> positive_integer(const std::string& path) {
  std::optional<std::string> text = read_small(path);
  std::optional<std::int64_t> n = text ? single_integer(*text) : std::nullopt;
  if (!n || *n <= 0) return std::nullopt;
  return double(*n);
}

std::optional<double> v1_quota(const std::string& dir) {
  std::optional<double> quota = positive_integer(dir + "/cpu.cfs_quota_us");
  std::optional<double> period = positive_integer(dir + "/cpu.cfs_period_us");
  if (!quota || !period) return std::nullopt;
  return *quota / *period;
}

// `limits`: also the cores allowed (the quotas up to the root, the cpuset).
JobCpuReading cgroup_v2_cpu(const std::string& cgroup, const ProcessReadOptions& o, bool limits, Remembered known) {
  JobCpuReading r;
  std::string dir = o.cgroup_root + cgroup;
  if (!fs::is_dir(dir)) return r;
  if (std::optional<std::string> text = read_small(dir + "/cpu.stat"))
    if (std::optional<std::uint64_t> us = keyed_value(*text, "usage_usec")) r.usage_s = double(*us) / 1e6;
  if (limits)
    r.cores_allowed = tightest(tightest_quota(o.cgroup_root, cgroup, v2_quota),
                               cpuset_cores(o.cgroup_root, cgroup, "cpuset.cpus.effective"));
  r.process_cpu_s = processes_cpu(cgroup_pids(dir, known), o, known.stats);
  return r;
}

// The mount of the first of `controllers` (cgroup v1's directory names under
// the cgroup root) that holds `cgroup`; "" when none does.
std::string v1_mount(const std::string& root, const std::string& cgroup,
                     std::initializer_list<const char*> controllers) {
  for (const char* c : controllers)
    if (fs::is_dir(root + "/" + c + cgroup)) return root + "/" + c;
  return "";
}

JobCpuReading cgroup_v1_cpu(const std::string& cgroup, const ProcessReadOptions& o, bool limits, Remembered known) {
  JobCpuReading r;
  std::string acct = v1_mount(o.cgroup_root, cgroup, {"cpuacct", "cpu,cpuacct", "cpuacct,cpu", "cpu"});
  std::string cpu = v1_mount(o.cgroup_root, cgroup, {"cpu", "cpu,cpuacct", "cpuacct,cpu"});
  std::string cpuset = v1_mount(o.cgroup_root, cgroup, {"cpuset"});
  if (!acct.empty()) {
    if (std::optional<std::string> text = read_small(acct + cgroup + "/cpuacct.usage"))
      if (std::optional<std::int64_t> ns = single_integer(*text); ns && *ns >= 0) r.usage_s = double(*ns) / 1e9;
    r.process_cpu_s = processes_cpu(cgroup_pids(acct + cgroup, known), o, known.stats);
  }
  if (!limits) return r;
  std::optional<double> quota = cpu.empty() ? std::nullopt : tightest_quota(cpu, cgroup, v1_quota);
  r.cores_allowed = tightest(quota, cpuset.empty() ? std::nullopt : cpuset_cores(cpuset, cgroup, "cpuset.cpus"));
  return r;
}

JobCpuReading cgroup_cpu(const std::string& cgroup, const ProcessReadOptions& o, bool limits = true,
                         Remembered known = {}) {
  std::optional<std::string> plain = plain_cgroup(cgroup);
  if (!plain) return {};
  if (fs::exists(o.cgroup_root + "/cgroup.controllers")) return cgroup_v2_cpu(*plain, o, limits, known);
  return cgroup_v1_cpu(*plain, o, limits, known);
}

JobCpuReading tree_cpu(std::uint32_t root, const ProcessReadOptions& o) {
  JobCpuReading r;
  if (!plausible_pid(root) || !stat_of(o, root)) return r;
  std::vector<int> pids = {static_cast<int>(root)};
  for (const ProcStat& s : process_tree(static_cast<int>(root), o.proc_root)) {
    if (pids.size() >= kMaxJobProcesses) break;
    pids.push_back(s.pid);
  }
  r.process_cpu_s = processes_cpu(pids, o);
  r.usage_s = total(r.process_cpu_s);
  if (std::optional<int> n = cpu_list_count(status_of(o, root).cpus_allowed_list)) r.cores_allowed = double(*n);
  return r;
}

// --- dcgm-exporter's job mapping ---

// A GPU's NVML index as a file name: decimal, no leading zero.
bool is_gpu_index(const std::string& name) {
  if (name.empty() || name.size() > 5 || (name.size() > 1 && name[0] == '0')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<std::string> mapping_lines(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t end = std::min(text.find('\n', i), text.size());
    std::string line = text.substr(i, end - i);
    line.erase(0, line.find_first_not_of(" \t\r"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (!line.empty()) out.push_back(std::move(line));
    i = end + 1;
  }
  return out;
}

}  // namespace

std::vector<ProcessFacts> read_process_facts(const std::vector<std::uint32_t>& pids,
                                             const ProcessReadOptions& options) {
  UserNames users;
  std::vector<ProcessFacts> out;
  out.reserve(pids.size());
  for (std::uint32_t pid : pids) out.push_back(facts_of(pid, options, &users));
  return out;
}

JobCpuReading read_job_cpu(const JobOwner& owner, const ProcessReadOptions& options) {
  if (!owner.cgroup.empty()) return cgroup_cpu(owner.cgroup, options);
  if (owner.root_pid != 0) return tree_cpu(owner.root_pid, options);
  return {};
}

struct ProcessReader::Impl {
  struct Process {
    std::uint64_t starttime = 0;
    int round = 0;  // when read
    ProcessFacts facts;
  };
  struct Limit {  // a job cgroup's, read every kRefreshRounds
    std::optional<double> cores;
    std::vector<std::string> dirs;  // it and the cgroups under it
    int round = 0;
  };
  ProcessReadOptions options;
  UserNames users;
  int round = 0;
  std::map<std::uint32_t, Process> processes;
  std::map<std::string, Limit> limits;  // by cgroup
  KnownStats stats;                      // this round's, of the PIDs asked

  bool fresh(int when) const { return round - when < kRefreshRounds; }
  ProcessFacts one(std::uint32_t pid, std::map<std::uint32_t, Process>* next);
};

ProcessReader::ProcessReader(ProcessReadOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
}

ProcessReader::~ProcessReader() = default;

ProcessFacts ProcessReader::Impl::one(std::uint32_t pid, std::map<std::uint32_t, Process>* next) {
  std::optional<ProcStat> s = plausible_pid(pid) ? stat_of(options, pid) : std::nullopt;
  if (s) stats[pid] = *s;
  auto it = processes.find(pid);
  if (s && s->starttime != 0 && it != processes.end() && it->second.starttime == s->starttime &&
      fresh(it->second.round))
    return (*next)[pid] = it->second, it->second.facts;
  ProcessFacts f = facts_of(pid, options, &users);
  if (s && f.found) (*next)[pid] = {s->starttime, round, f};
  return f;
}

std::vector<ProcessFacts> ProcessReader::facts(const std::vector<std::uint32_t>& pids) {
  ++impl_->round;
  if (impl_->round % kRefreshRounds == 0) impl_->users = UserNames();  // a name may change
  std::erase_if(impl_->limits, [this](const auto& l) { return !impl_->fresh(l.second.round); });
  std::map<std::uint32_t, Impl::Process> next;
  impl_->stats.clear();
  std::vector<ProcessFacts> out;
  out.reserve(pids.size());
  for (std::uint32_t pid : pids) out.push_back(impl_->one(pid, &next));
  impl_->processes = std::move(next);
  return out;
}

JobCpuReading ProcessReader::job_cpu(const JobOwner& owner) {
  if (owner.cgroup.empty()) return read_job_cpu(owner, impl_->options);
  auto it = impl_->limits.find(owner.cgroup);
  bool known = it != impl_->limits.end() && impl_->fresh(it->second.round);
  Impl::Limit fresh{std::nullopt, {}, impl_->round};
  Impl::Limit& limit = known ? it->second : fresh;
  JobCpuReading r = cgroup_cpu(owner.cgroup, impl_->options, !known, {&impl_->stats, &limit.dirs});
  if (known)
    r.cores_allowed = limit.cores;
  else
    limit.cores = r.cores_allowed, impl_->limits[owner.cgroup] = std::move(limit);
  return r;
}

bool read_hpc_job_mapping(const std::string& dir, HpcJobMap* out, std::string* err) {
  std::vector<std::string> names;
  if (!fs::list_dir(dir, &names, err)) return false;
  out->clear();
  std::size_t files = 0;
  for (const std::string& name : names) {
    if (!is_gpu_index(name)) continue;
    if (files++ == kMaxMappingFiles) break;
    if (std::optional<std::string> text = read_capped(fs::join(dir, name), kMaxMappingBytes, '\n'))
      (*out)[name] = mapping_lines(*text);
  }
  return true;
}

}  // namespace gpuenv
