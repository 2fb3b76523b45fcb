#include "decide/launcher_env.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <initializer_list>

#include "sys/text.h"

namespace gpuenv {
namespace {

using Names = std::initializer_list<const char*>;

bool any_set(const Options& o, Names names) {
  for (const char* n : names)
    if (o.getenv(n)) return true;
  return false;
}

// The engine, with "NAME=value" for each of `names` that is set.
EngineSeen seen(const Options& o, Engine e, std::string name, Names names) {
  EngineSeen s{e, std::move(name), {}};
  for (const char* n : names)
    if (const std::string* v = o.getenv(n)) s.vars.push_back(std::string(n) + "=" + *v);
  return s;
}

// A count read from `name`, at least `min`; a value that is set but not one
// is recorded in l->malformed and reads as unset.
std::optional<int> read(const Options& o, const std::string& name, int min, LaunchEnv* l) {
  const std::string* raw = o.getenv(name);
  if (!raw) return std::nullopt;
  std::optional<int> v = parse_count(*raw);
  if (v && *v >= min) return v;
  l->malformed[name] = name + "=" + *raw + " is not " +
                       (min > 0 ? "a positive integer" : "a non-negative integer");
  return std::nullopt;
}

// torchrun's own words: PET_NNODES may be a range ("1:4") and
// PET_NPROC_PER_NODE a word ("auto", "gpu"); both then say no fixed count.
std::optional<int> read_torchrun_arg(const Options& o, const std::string& name, LaunchEnv* l) {
  const std::string* raw = o.getenv(name);
  if (!raw) return std::nullopt;
  if (raw->find(':') != std::string::npos || (!raw->empty() && std::isalpha(static_cast<unsigned char>((*raw)[0]))))
    return std::nullopt;
  return read(o, name, 1, l);
}

void torchrun(const Options& o, LaunchEnv* l) {
  l->has_local_rank = o.getenv("LOCAL_RANK") != nullptr;
  l->local_rank = read(o, "LOCAL_RANK", 0, l);
  l->local_world_size = read(o, "LOCAL_WORLD_SIZE", 1, l);
  l->rank = read(o, "RANK", 0, l);
  l->world_size = read(o, "WORLD_SIZE", 1, l);
  l->node_rank = read(o, "GROUP_RANK", 0, l);
  l->nnodes = read(o, "GROUP_WORLD_SIZE", 1, l);
}

// The pod torchrun is started in: no local rank yet, as torchrun gives one
// to each worker it starts. The training operator sets WORLD_SIZE to all the
// processes (nodes x PET_NPROC_PER_NODE) and RANK to the pod's index.
void kubeflow(const Options& o, LaunchEnv* l) {
  l->nnodes = read_torchrun_arg(o, "PET_NNODES", l);
  l->local_world_size = read_torchrun_arg(o, "PET_NPROC_PER_NODE", l);
  l->local_world_size_var = "PET_NPROC_PER_NODE";
  l->node_rank = o.getenv("PET_NODE_RANK") ? read(o, "PET_NODE_RANK", 0, l) : read(o, "RANK", 0, l);
  l->world_size = read(o, "WORLD_SIZE", 1, l);
  if (l->world_size || !l->nnodes || !l->local_world_size) return;
  int product = 0;
  if (__builtin_mul_overflow(*l->nnodes, *l->local_world_size, &product) || product > kMaxLaunchCount) {
    l->malformed[l->world_size_var] = "PET_NNODES=" + std::to_string(*l->nnodes) + " x PET_NPROC_PER_NODE=" +
                                 std::to_string(*l->local_world_size) + " is more than " +
                                 std::to_string(kMaxLaunchCount) + " processes: the world size is left unknown";
    return;
  }
  l->world_size = product;
}

// An Indexed Job's pod (JobSet's jobs are Indexed Jobs): its index is the
// node rank torchrun is then given.
void jobset(const Options& o, LaunchEnv* l) {
  l->node_rank = read(o, "JOB_COMPLETION_INDEX", 0, l);
  l->world_size = read(o, "WORLD_SIZE", 1, l);
}

// The tasks on this node: the step's layout first, then the job's.
void slurm_local_tasks(const Options& o, LaunchEnv* l) {
  int node = l->node_rank.value_or(0);
  for (const char* name : {"SLURM_STEP_TASKS_PER_NODE", "SLURM_NTASKS_PER_NODE", "SLURM_TASKS_PER_NODE"}) {
    const std::string* raw = o.getenv(name);
    if (!raw) continue;
    l->local_world_size_var = name;
    l->local_world_size = slurm_tasks_on_node(*raw, node);
    if (!l->local_world_size)
      l->malformed[name] = std::string(name) + "=" + *raw + " does not give node " + std::to_string(node) +
                           " a task count (Slurm writes \"2\" or \"2(x3),1\")";
    return;
  }
}

void slurm(const Options& o, LaunchEnv* l) {
  l->local_rank_var = "SLURM_LOCALID";
  l->world_size_var = "SLURM_NTASKS";
  l->has_local_rank = o.getenv("SLURM_LOCALID") != nullptr;
  l->rank = read(o, "SLURM_PROCID", 0, l);
  l->local_rank = read(o, "SLURM_LOCALID", 0, l);
  l->world_size = read(o, "SLURM_NTASKS", 1, l);
  l->node_rank = read(o, "SLURM_NODEID", 0, l);
  l->nnodes = read(o, "SLURM_NNODES", 1, l);
  slurm_local_tasks(o, l);
}

// Slurm's gres plugin sets CUDA_VISIBLE_DEVICES with SLURM_STEP_GPUS (srun)
// or SLURM_JOB_GPUS (the batch script) beside it.
void slurm_binding(const Options& o, LaunchEnv* l) {
  const std::string* cvd = o.getenv("CUDA_VISIBLE_DEVICES");
  if (!cvd) return;
  for (const char* name : {"SLURM_STEP_GPUS", "SLURM_JOB_GPUS"})
    if (const std::string* gpus = o.getenv(name)) {
      l->bound_gpus = *cvd;
      l->bound_by = std::string(name) + "=" + *gpus;
      return;
    }
}

constexpr Names kTorchrun = {"LOCAL_RANK", "LOCAL_WORLD_SIZE", "RANK", "WORLD_SIZE", "GROUP_RANK",
                             "TORCHELASTIC_RUN_ID", "MASTER_ADDR", "MASTER_PORT"};
constexpr Names kKubeflow = {"PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR",
                             "PET_MASTER_PORT"};
constexpr Names kJobSet = {"JOB_COMPLETION_INDEX", "JOBSET_NAME", "REPLICATED_JOB_NAME"};
constexpr Names kSlurm = {"SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS"};

bool slurm_step(const Options& o) { return o.getenv("SLURM_STEP_ID") != nullptr; }

std::vector<EngineSeen> recognise(const Options& o) {
  std::vector<EngineSeen> out;
  if (any_set(o, {"LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "TORCHELASTIC_RUN_ID"}))
    out.push_back(seen(o, Engine::kTorchrun, "torchrun", kTorchrun));
  if (any_set(o, {"PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK"})) {
    EngineSeen k = seen(o, Engine::kKubeflow, "Kubeflow PyTorchJob", kKubeflow);
    if (out.empty())  // the operator's own WORLD_SIZE/RANK, before torchrun replaces them
      for (const char* n : {"WORLD_SIZE", "RANK", "MASTER_ADDR", "MASTER_PORT"})
        if (const std::string* v = o.getenv(n)) k.vars.push_back(std::string(n) + "=" + *v);
    out.push_back(std::move(k));
  }
  if (any_set(o, kJobSet))
    out.push_back(seen(o, Engine::kJobSet, any_set(o, {"JOBSET_NAME", "REPLICATED_JOB_NAME"})
                                               ? "JobSet" : "Indexed Job (JobSet's, or any)",
                       kJobSet));
  if (any_set(o, {"SLURM_PROCID", "SLURM_LOCALID"})) {
    // The batch script has SLURM_PROCID=0 too, but no step: it is no task.
    EngineSeen s = slurm_step(o) ? seen(o, Engine::kSlurm, "Slurm", kSlurm)
                                 : seen(o, Engine::kSlurm, "Slurm batch script", {"SLURM_JOB_ID", "SLURM_NTASKS"});
    if (const std::string* v = o.getenv("SLURM_STEP_GPUS")) s.vars.push_back("SLURM_STEP_GPUS=" + *v);
    if (!slurm_step(o)) s.vars.push_back("no SLURM_STEP_ID: srun starts the tasks");
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

std::string local_rank_beyond_visible(const LaunchEnv& l, const Options& o) {
  const std::string* cvd = o.getenv("CUDA_VISIBLE_DEVICES");
  if (!l.local_rank || !cvd || cvd->empty()) return "";
  std::size_t visible = split_commas(*cvd).size();
  if (visible == 0 || std::size_t(*l.local_rank) < visible) return "";
  std::string rank = "LOCAL_RANK=" + std::to_string(*l.local_rank) +
                     (l.local_rank_var == "LOCAL_RANK" ? "" : " (from " + l.local_rank_var + ")");
  return fmt::format(
      "{} is this process's rank on the node, but it sees {} GPU{} (CUDA_VISIBLE_DEVICES={}), so "
      "torch.cuda.set_device(LOCAL_RANK) fails with \"invalid device ordinal\": call "
      "torch.cuda.set_device(LOCAL_RANK % torch.cuda.device_count()) (with one GPU per task: cuda:0); "
      "PyTorch Lightning derives LOCAL_RANK the same way",
      rank, visible, visible == 1 ? "" : "s", *cvd);
}

std::optional<int> parse_count(const std::string& s) {
  static_assert(kMaxLaunchCount == 999999, "six digits at most");
  if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoi(s);
}

// One "2" or "2(x3)" entry: tasks and how many nodes run that many.
static std::optional<std::pair<int, int>> tasks_entry(const std::string& item) {
  size_t paren = item.find('(');
  std::optional<int> tasks = parse_count(item.substr(0, paren)), times = 1;
  if (paren != std::string::npos) {
    bool closed = item.size() > paren + 3 && item.compare(paren, 2, "(x") == 0 && item.back() == ')';
    times = closed ? parse_count(item.substr(paren + 2, item.size() - paren - 3)) : std::nullopt;
  }
  if (!tasks || *tasks < 1 || !times || *times < 1) return std::nullopt;
  return std::make_pair(*tasks, *times);
}

std::optional<int> slurm_tasks_on_node(const std::string& s, int node) {
  std::optional<int> found;
  for (std::string_view item : split(s, ',')) {
    auto entry = tasks_entry(std::string(item));
    if (!entry) return std::nullopt;  // the whole value must be Slurm's form
    if (!found && node >= 0 && node < entry->second) found = entry->first;
    if (node >= 0) node -= entry->second;  // once below 0, no further: 3,000 x 999999 nodes overflow an int
  }
  return found;
}

LaunchEnv launch_env(const Options& o) {
  LaunchEnv l;
  l.seen = recognise(o);
  l.engine = l.seen.empty() ? Engine::kNone : l.seen[0].engine;
  switch (l.engine) {
    case Engine::kTorchrun: torchrun(o, &l); break;
    case Engine::kKubeflow: kubeflow(o, &l); break;
    case Engine::kJobSet: jobset(o, &l); break;
    case Engine::kSlurm:
      if (slurm_step(o)) slurm(o, &l);
      break;
    case Engine::kNone: l.world_size = read(o, "WORLD_SIZE", 1, &l); break;
  }
  slurm_binding(o, &l);
  if (slurm_step(o)) l.cpus_per_task = read(o, "SLURM_CPUS_PER_TASK", 1, &l);
  return l;
}

std::string launch_summary(const LaunchEnv& l) {
  std::vector<std::string> parts;
  for (const auto& s : l.seen) parts.push_back(s.name + " (" + join(s.vars, ", ") + ")");
  return join(parts, ", inside ");
}

std::optional<std::string> slurm_first_host(const std::string& list) {
  std::string host;
  for (size_t i = 0; i < list.size() && list[i] != ','; ++i) {
    char c = list[i];
    if (c == '[') {  // the first of the range list: "07-09,12" -> "07"
      size_t close = list.find(']', i);
      if (close == std::string::npos) return std::nullopt;
      std::string first = list.substr(i + 1, close - i - 1);
      first = first.substr(0, first.find_first_of(",-"));
      if (first.empty() || first.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
      host += first;
      i = close;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_') {
      host += c;
    } else {
      return std::nullopt;
    }
  }
  if (host.empty() || host.size() > 253) return std::nullopt;
  return host;
}

const char* engine_id(Engine e) {
  switch (e) {
    case Engine::kTorchrun: return "torchrun";
    case Engine::kKubeflow: return "kubeflow";
    case Engine::kJobSet: return "jobset";
    case Engine::kSlurm: return "slurm";
    case Engine::kNone: break;
  }
  return "";
}

}  // namespace gpuenv
