// cpu: OMP_NUM_THREADS per GPU process, and under torchrun (or Slurm, one
// task per GPU) a NUMA-local, disjoint CPU slice for each local rank; a task
// Slurm bound to one GPU is pinned to that GPU's CPUs. With Host::cpu_cores
// known the counts and slices are physical cores, as PyTorch's own default
// is, so SMT siblings do not double the threads. docs/rules/cpu.md
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "decide/launcher_env.h"
#include "decide/rules/rules.h"
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

struct CpuContext {
  const Machine& m;
  Visibility visible;
  LaunchEnv launch;
  int processes = 1;  // GPU processes on this host
};

// Without a launcher, one process per device CUDA enumerates: MIG devices
// count once, since one process uses one of them.
int local_processes(const CpuContext& c) {
  if (c.launch.local_world_size) return *c.launch.local_world_size;
  return std::max<int>(1, enumerated_devices(c.visible));
}

std::optional<int> usable_cpus(const Host& h) {
  std::optional<int> n = h.usable_cpus ? h.usable_cpus : h.online_cpus;
  return n && *n > 0 ? n : std::nullopt;
}

// With a cgroup quota, each process's fair share of it; nullopt without one.
std::optional<int> quota_share(const CpuContext& c) {
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

// What the threads are counted from, and how the reason says it.
struct Usable {
  int count = 0;
  std::string what;  // "112 usable CPUs", "48 physical cores (96 logical CPUs) in ..."
};

Usable usable_logical(int cpus) { return {cpus, count(cpus, "usable CPU", "usable CPUs")}; }

// The physical cores of this process's affinity, capped by the cgroup quota;
// nullopt when the cores were not sensed.
std::optional<Usable> usable_cores(const Host& h) {
  if (!h.cpu_cores || h.cpu_cores->empty()) return std::nullopt;
  int cores = static_cast<int>(h.cpu_cores->size()), logical = 0;
  for (const auto& core : *h.cpu_cores) logical += static_cast<int>(core.size());
  std::string in = count(cores, "physical core", "physical cores") + " (" +
                   count(logical, "logical CPU", "logical CPUs") + ") in this process's affinity";
  const std::optional<double>& q = h.cgroup_cpu_quota;
  if (!q || !(*q > 0) || *q >= cores) return Usable{cores, in};
  int quota = std::max(1, static_cast<int>(std::ceil(*q - 1e-9)));
  char text[32];
  std::snprintf(text, sizeof text, "%g", *q);
  return Usable{quota, "a cgroup CPU quota of " + std::string(text) + " CPUs (" + in + ")"};
}

Setting omp_share(const CpuContext& c, const Usable& usable) {
  int threads = std::max(1, usable.count / c.processes);
  // Without a visible GPU the one process is not a GPU process.
  bool gpu = !c.visible.devices.empty() || c.launch.local_world_size;
  return omp_setting(threads, usable.what + " / " +
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
std::optional<std::vector<int>> local_cpus(const CpuContext& c, int rank) {
  const Gpu* g = c.visible.devices[rank].gpu;
  if (!g->cpu_affinity || !c.m.host.affinity_cpus) return std::nullopt;
  return intersect(*g->cpu_affinity, *c.m.host.affinity_cpus);
}

// Local ranks (in order) whose GPUs share `cpus`; `rank` is among them.
std::vector<int> peers(const CpuContext& c, const std::vector<int>& cpus) {
  std::vector<int> out;
  int ranks = std::min<int>(c.processes, c.visible.devices.size());
  for (int r = 0; r < ranks; ++r)
    if (local_cpus(c, r) == cpus) out.push_back(r);
  return out;
}

std::string rank_range(const std::vector<int>& ranks) {
  return ranks.size() == 1 ? "rank " + std::to_string(ranks[0]) : "ranks " + cpu_list(ranks);
}

// `cpus` grouped by physical core (Host::cpu_cores), cores in order of their
// first CPU; each CPU its own group when the cores are unknown.
std::vector<std::vector<int>> by_core(const Host& h, const std::vector<int>& cpus) {
  std::vector<std::vector<int>> out;
  std::vector<int> rest = cpus;
  if (h.cpu_cores)
    for (const auto& core : *h.cpu_cores)
      if (auto mine = intersect(core, cpus); !mine.empty()) {
        out.push_back(mine);
        for (int c : mine) rest.erase(std::remove(rest.begin(), rest.end(), c), rest.end());
      }
  for (int c : rest) out.push_back({c});
  std::sort(out.begin(), out.end());
  return out;
}

// The rank's slice of `cpus`, whole cores each, and how many cores it got.
std::pair<CpuBinding, int> slice(const Host& h, const std::vector<int>& cpus,
                                 const std::vector<int>& ranks, int rank, const std::string& gpu) {
  std::string near = gpu + " is local to CPUs " + cpu_list(cpus) + ", shared by local " + rank_range(ranks);
  std::vector<std::vector<int>> cores = by_core(h, cpus);
  int size = static_cast<int>(cores.size() / ranks.size());
  if (size == 0)
    return {{cpus, near + ": too few " + std::string(h.cpu_cores ? "cores" : "CPUs") +
                       " to give each rank its own, so they share them"},
            1};
  int pos = static_cast<int>(std::find(ranks.begin(), ranks.end(), rank) - ranks.begin());
  std::vector<int> mine;
  for (int i = pos * size; i < (pos + 1) * size; ++i) mine.insert(mine.end(), cores[i].begin(), cores[i].end());
  std::sort(mine.begin(), mine.end());
  std::string got = "local rank " + std::to_string(rank) + " gets " + cpu_list(mine);
  if (h.cpu_cores) got += " (" + count(size, "physical core", "physical cores") + ")";
  return {{mine, near + ": " + got}, size};
}

std::string device_label(const VisibleDevice& d) {
  return "GPU " + std::to_string(d.gpu->index) + (d.mig ? " (" + d.mig->uuid + ")" : "");
}

Note note(Severity s, std::string msg) { return {s, "", std::move(msg)}; }

// A bound rank's OMP threads, and why that many.
struct Threads {
  int count = 1;
  std::string why;
};

bool rank_has_gpu(const CpuContext& c, int rank, Decision* d) {
  int visible = static_cast<int>(c.visible.devices.size());
  if (rank < visible && rank < c.processes) return true;
  std::string msg = c.launch.local_rank_var + "=" + std::to_string(rank) + " but " + std::to_string(visible) +
                    " device(s) are visible and " + (c.launch.local_world_size ? c.launch.local_world_size_var + " is " : "the local process count is ") +
                    std::to_string(c.processes);
  d->notes.push_back(note(Severity::kWarning, msg + ": this rank has no GPU of its own, so no CPU binding"));
  return false;
}

Note no_cpus(const std::string& gpu, bool known) {
  return known ? note(Severity::kWarning, "no CPU binding: none of the CPUs local to " + gpu +
                                              " are in this process's CPU affinity")
               : note(Severity::kInfo, "no CPU binding: the CPUs local to " + gpu +
                                           " or this process's CPU affinity are unknown");
}

// Slurm bound this task to the one GPU it sees: the CPUs near that GPU are
// all its to use (tasks whose GPUs share a NUMA node share them), and its
// threads are its fair share of this process's cores.
std::optional<Threads> bind_bound_gpu(const CpuContext& c, Decision* d) {
  std::string gpu = device_label(c.visible.devices[0]);
  std::optional<std::vector<int>> cpus = local_cpus(c, 0);
  if (!cpus || cpus->empty()) {
    d->notes.push_back(no_cpus(gpu, cpus.has_value()));
    return std::nullopt;
  }
  d->binding = CpuBinding{*cpus, "Slurm bound " + gpu + " to this task (CUDA_VISIBLE_DEVICES=" +
                                     *c.launch.bound_gpus + ", " + c.launch.bound_by + "); it is local to CPUs " +
                                     cpu_list(*cpus) + ", so the task runs there"};
  int near = static_cast<int>(by_core(c.m.host, *cpus).size());
  int all = static_cast<int>(by_core(c.m.host, *c.m.host.affinity_cpus).size());
  int threads = std::max(1, std::min(near, all / c.processes));
  std::string unit = c.m.host.cpu_cores ? "physical cores" : "CPUs";
  return Threads{threads, "this task's share of the " + std::to_string(all) + " " + unit + " of this process's "
                          "affinity among " + count(c.processes, "task", "tasks") + ", at most the " +
                          std::to_string(near) + " near its GPU"};
}

// Under Slurm, which visible device is this task's: its only one when Slurm
// bound it, else the one at its local rank, as under torchrun; nullopt (with
// a note) when a task has several GPUs, as a task that starts torchrun does.
std::optional<int> slurm_device(const CpuContext& c, Decision* d) {
  int visible = static_cast<int>(c.visible.devices.size());
  if (c.launch.bound_gpus && visible == 1) return 0;
  if (visible <= c.processes) return *c.launch.local_rank;
  d->notes.push_back(note(Severity::kInfo, "no CPU binding: Slurm runs " + count(c.processes, "task", "tasks") +
                                               " on this node for " + std::to_string(visible) +
                                               " visible GPUs, so a task has several (run one task per GPU, "
                                               "or torchrun in the task, to have each rank pinned)"));
  return std::nullopt;
}

// Binds this rank; returns its threads, or nullopt (with a note).
std::optional<Threads> bind_rank(const CpuContext& c, Decision* d) {
  std::optional<int> device = *c.launch.local_rank;
  if (c.launch.engine == Engine::kSlurm) device = slurm_device(c, d);
  if (!device) return std::nullopt;
  if (c.launch.engine == Engine::kSlurm && c.launch.bound_gpus && c.visible.devices.size() == 1 &&
      c.m.host.affinity_cpus)
    return bind_bound_gpu(c, d);
  int rank = *device;
  if (!rank_has_gpu(c, rank, d)) return std::nullopt;
  std::string gpu = device_label(c.visible.devices[rank]);
  std::optional<std::vector<int>> cpus = local_cpus(c, rank);
  if (!cpus || cpus->empty()) {
    d->notes.push_back(no_cpus(gpu, cpus.has_value()));
    return std::nullopt;
  }
  auto [binding, threads] = slice(c.m.host, *cpus, peers(c, *cpus), rank, gpu);
  d->binding = std::move(binding);
  return Threads{threads, c.m.host.cpu_cores ? "one thread per physical core of this rank's slice"
                                             : "one thread per CPU of this rank's slice"};
}

void bound_threads(const CpuContext& c, const Threads& per_rank, Decision* d) {
  int threads = per_rank.count;
  std::string why = per_rank.why;
  if (auto share = quota_share(c); share && *share < threads) {
    threads = *share;
    why = "the cgroup CPU quota shared by " + count(c.processes, "process", "processes");
  }
  d->settings.push_back(omp_setting(threads, count(threads, "thread", "threads") + ": " + why));
}

void warn_malformed(const CpuContext& c, Decision* d) {
  const auto& bad = c.launch.malformed;
  if (bad.count(c.launch.local_rank_var))
    d->notes.push_back(
        note(Severity::kWarning, bad.at(c.launch.local_rank_var) + ": no CPU binding for this process"));
  if (bad.count(c.launch.local_world_size_var))
    d->notes.push_back(note(Severity::kWarning, bad.at(c.launch.local_world_size_var) +
                                                    ": counting one process per visible device instead"));
  if (bad.count("SLURM_CPUS_PER_TASK"))
    d->notes.push_back(note(Severity::kWarning, bad.at("SLURM_CPUS_PER_TASK") + ": ignored"));
}

// Slurm gave each task SLURM_CPUS_PER_TASK CPUs: no more threads than that.
void cap_to_slurm_cpus(const CpuContext& c, Decision* d) {
  if (!c.launch.cpus_per_task) return;
  for (auto& s : d->settings)
    if (s.name == "OMP_NUM_THREADS" && std::stoi(s.value) > *c.launch.cpus_per_task) {
      s.value = std::to_string(*c.launch.cpus_per_task);
      s.reason = count(*c.launch.cpus_per_task, "thread", "threads") + ": Slurm gives each task " +
                 count(*c.launch.cpus_per_task, "CPU", "CPUs") + " (SLURM_CPUS_PER_TASK); without that cap, " +
                 s.reason;
    }
}

}  // namespace

Decision rule_cpu(const Machine& m, const Options& o) {
  Decision d;
  CpuContext c{m, visible_devices(m, o), launch_env(o)};
  c.processes = local_processes(c);
  warn_malformed(c, &d);
  std::optional<Usable> usable = usable_cores(m.host);
  if (!usable)
    if (auto n = usable_cpus(m.host)) usable = usable_logical(*n);
  std::optional<Threads> per_rank;
  if (c.launch.local_rank) per_rank = bind_rank(c, &d);
  if (per_rank) {
    bound_threads(c, *per_rank, &d);
  } else if (usable) {
    d.settings.push_back(omp_share(c, *usable));
  } else {
    d.notes.push_back(
        note(Severity::kInfo, "OMP_NUM_THREADS left alone: the number of usable CPUs is unknown"));
  }
  cap_to_slurm_cpus(c, &d);
  // torchrun (TORCHELASTIC_RUN_ID in its workers) sets OMP_NUM_THREADS=1
  // when it is unset, so a 1 there cannot be told from the user's: the one
  // value gpuenv replaces without --override (README, "Usage").
  if (o.getenv("TORCHELASTIC_RUN_ID"))
    for (auto& s : d.settings)
      if (s.name == "OMP_NUM_THREADS") {
        s.launcher_default = "1";
        s.launcher_default_is = "the value torchrun gives every worker when it is unset";
      }
  return d;
}

}  // namespace gpuenv
