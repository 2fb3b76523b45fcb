// cpu: OMP_NUM_THREADS per GPU process, and under torchrun a NUMA-local,
// disjoint CPU slice for each local rank. docs/rules/cpu.md
#include <algorithm>
#include <cmath>

#include "decide/launch.h"
#include "decide/rules.h"
#include "decide/visible.h"

namespace gpuenv {
namespace {

/// "0-15,32-47"
std::string cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

struct Context {
  const Machine& m;
  Visibility visible;
  LaunchEnv launch;
  int processes = 1;  // GPU processes on this host
};

int local_processes(const Context& c) {
  if (c.launch.local_world_size) return *c.launch.local_world_size;
  return std::max<int>(1, c.visible.devices.size());
}

std::optional<int> usable_cpus(const Host& h) {
  std::optional<int> n = h.usable_cpus ? h.usable_cpus : h.online_cpus;
  return n && *n > 0 ? n : std::nullopt;
}

// With a cgroup quota, each process's fair share of it; nullopt without one.
std::optional<int> quota_share(const Context& c) {
  const std::optional<double>& q = c.m.host.cgroup_cpu_quota;
  if (!q || !(*q > 0)) return std::nullopt;
  int quota = static_cast<int>(std::ceil(std::min(*q, 1e6)));
  return std::max(1, quota / c.processes);
}

Setting omp_setting(int threads, const std::string& why) {
  return make_setting("OMP_NUM_THREADS", std::to_string(threads),
                 why + " (torchrun would set 1; left unset, every process starts one thread per core)");
}

std::string count(int n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

Setting omp_share(const Context& c, int usable) {
  int threads = std::max(1, usable / c.processes);
  // Without a visible GPU the one process is not a GPU process.
  bool gpu = !c.visible.devices.empty() || c.launch.local_world_size;
  return omp_setting(threads, count(usable, "usable CPU", "usable CPUs") + " / " +
                                  count(c.processes, gpu ? "GPU process" : "process",
                                        gpu ? "GPU processes" : "processes") + " = " +
                                  count(threads, "thread", "threads") + " each");
}

std::vector<int> intersect(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> x = a, y = b, out;
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  std::set_intersection(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(out));
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The CPUs near rank r's GPU that this process may use; nullopt if unknown.
std::optional<std::vector<int>> local_cpus(const Context& c, int rank) {
  const Gpu* g = c.visible.devices[rank].gpu;
  if (!g->cpu_affinity || !c.m.host.affinity_cpus) return std::nullopt;
  return intersect(*g->cpu_affinity, *c.m.host.affinity_cpus);
}

// Local ranks (in order) whose GPUs share `cpus`; `rank` is among them.
std::vector<int> peers(const Context& c, const std::vector<int>& cpus) {
  std::vector<int> out;
  int ranks = std::min<int>(c.processes, c.visible.devices.size());
  for (int r = 0; r < ranks; ++r)
    if (local_cpus(c, r) == cpus) out.push_back(r);
  return out;
}

std::string rank_range(const std::vector<int>& ranks) {
  return ranks.size() == 1 ? "rank " + std::to_string(ranks[0]) : "ranks " + cpu_list(ranks);
}

CpuBinding slice(const std::vector<int>& cpus, const std::vector<int>& ranks, int rank,
                 const std::string& gpu) {
  std::string near = gpu + " is local to CPUs " + cpu_list(cpus) + ", shared by local " + rank_range(ranks);
  int size = static_cast<int>(cpus.size() / ranks.size());
  if (size == 0) return {cpus, near + ": too few CPUs to give each rank its own, so they share them"};
  int pos = static_cast<int>(std::find(ranks.begin(), ranks.end(), rank) - ranks.begin());
  std::vector<int> mine(cpus.begin() + pos * size, cpus.begin() + (pos + 1) * size);
  return {mine, near + ": local rank " + std::to_string(rank) + " gets " + cpu_list(mine)};
}

std::string gpu_label(const VisibleDevice& d) {
  return "GPU " + std::to_string(d.gpu->index) + (d.mig ? " (" + d.mig->uuid + ")" : "");
}

Note note(Severity s, std::string msg) { return {s, "", std::move(msg)}; }

bool rank_has_gpu(const Context& c, int rank, Decision* d) {
  int visible = static_cast<int>(c.visible.devices.size());
  if (rank < visible && rank < c.processes) return true;
  std::string msg = "LOCAL_RANK=" + std::to_string(rank) + " but " + std::to_string(visible) +
                    " device(s) are visible and LOCAL_WORLD_SIZE is " + std::to_string(c.processes);
  d->notes.push_back(note(Severity::kWarning, msg + ": this rank has no GPU of its own, so no CPU binding"));
  return false;
}

Note no_cpus(const std::string& gpu, bool known) {
  return known ? note(Severity::kWarning, "no CPU binding: none of the CPUs local to " + gpu +
                                              " are in this process's CPU affinity")
               : note(Severity::kInfo, "no CPU binding: the CPUs local to " + gpu +
                                           " or this process's CPU affinity are unknown");
}

// Binds this torchrun rank; returns its CPUs per rank, or nullopt (with a note).
std::optional<int> bind_rank(const Context& c, Decision* d) {
  int rank = *c.launch.local_rank;
  if (!rank_has_gpu(c, rank, d)) return std::nullopt;
  std::string gpu = gpu_label(c.visible.devices[rank]);
  std::optional<std::vector<int>> cpus = local_cpus(c, rank);
  if (!cpus || cpus->empty()) {
    d->notes.push_back(no_cpus(gpu, cpus.has_value()));
    return std::nullopt;
  }
  std::vector<int> ranks = peers(c, *cpus);
  d->binding = slice(*cpus, ranks, rank, gpu);
  return std::max<int>(1, cpus->size() / ranks.size());
}

void bound_threads(const Context& c, int per_rank, Decision* d) {
  int threads = per_rank;
  std::string why = "one thread per CPU of this rank's slice";
  if (auto share = quota_share(c); share && *share < threads) {
    threads = *share;
    why = "the cgroup CPU quota shared by " + count(c.processes, "process", "processes");
  }
  d->settings.push_back(omp_setting(threads, count(threads, "thread", "threads") + ": " + why));
}

void warn_malformed(const Context& c, Decision* d) {
  const auto& bad = c.launch.malformed;
  if (bad.count("LOCAL_RANK"))
    d->notes.push_back(note(Severity::kWarning, bad.at("LOCAL_RANK") + ": no CPU binding for this process"));
  if (bad.count("LOCAL_WORLD_SIZE"))
    d->notes.push_back(note(Severity::kWarning, bad.at("LOCAL_WORLD_SIZE") +
                                                    ": counting one process per visible device instead"));
}

}  // namespace

Decision rule_cpu(const Machine& m, const Options& o) {
  Decision d;
  Context c{m, visible_devices(m, o), launch_env(o)};
  c.processes = local_processes(c);
  warn_malformed(c, &d);
  std::optional<int> usable = usable_cpus(m.host);
  std::optional<int> per_rank;
  if (c.launch.local_rank) per_rank = bind_rank(c, &d);
  if (per_rank) {
    bound_threads(c, *per_rank, &d);
  } else if (usable) {
    d.settings.push_back(omp_share(c, *usable));
  } else {
    d.notes.push_back(
        note(Severity::kInfo, "OMP_NUM_THREADS left alone: the number of usable CPUs is unknown"));
  }
  // torchrun (TORCHELASTIC_RUN_ID in its workers) sets OMP_NUM_THREADS=1
  // when the user did not; that 1 is its default, not the user's choice.
  if (o.getenv("TORCHELASTIC_RUN_ID"))
    for (auto& s : d.settings)
      if (s.name == "OMP_NUM_THREADS") s.launcher_default = "1";
  return d;
}

}  // namespace gpuenv
