// ranks: under srun without torchrun, the variables torch.distributed's
// env:// init reads (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT), from Slurm's own. Never one that is set: a
// launcher or the user who set it knows better. docs/rules/ranks.md
#include "decide/launcher_env.h"
#include "decide/rules/rules.h"
#include "sys/text.h"

namespace gpuenv {
namespace {

// The port from the job id, as PyTorch Lightning's SLURMEnvironment derives
// it: 15000 + the id's last four digits. Every task of the job agrees, and
// two jobs on one node differ unless their ids end alike.
std::optional<int> master_port(const Options& o) {
  const std::string* id = o.getenv("SLURM_JOB_ID");
  if (!id || id->empty() || id->size() > 18 || id->find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return 15000 + std::stoi(id->substr(id->size() > 4 ? id->size() - 4 : 0));
}

// The step's first node (every task computes the same one); the job's list
// when the step's is missing.
std::optional<std::pair<std::string, std::string>> master_addr(const Options& o) {
  for (const char* name : {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"})
    if (const std::string* list = o.getenv(name)) {
      auto host = slurm_first_host(*list);
      if (host) return std::make_pair(*host, std::string(name) + "=" + std::string(utf8_prefix(*list, 80)));
      return std::nullopt;
    }
  return std::nullopt;
}

struct Adder {
  const Options& o;
  Decision* d;
  void operator()(const char* name, const std::optional<int>& v, const std::string& why) {
    if (v) (*this)(name, std::to_string(*v), why);
  }
  void operator()(const char* name, const std::string& v, const std::string& why) {
    if (o.getenv(name)) return;  // set by the user or a launcher: theirs
    d->settings.push_back(make_setting(name, v, why + ", for torch.distributed's env:// init (srun starts "
                                                      "one process per task and no torchrun)"));
  }
};

}  // namespace

Decision rule_ranks(const Machine&, const Options& o) {
  Decision d;
  LaunchEnv l = launch_env(o);
  if (l.engine != Engine::kSlurm || !o.getenv("SLURM_STEP_ID")) return d;
  Adder add{o, &d};
  add("RANK", l.rank, "SLURM_PROCID: this task's rank in the step");
  add("LOCAL_RANK", l.local_rank, "SLURM_LOCALID: its rank on this node");
  if (std::string why = local_rank_beyond_visible(l, o); !why.empty()) d.notes.push_back({Severity::kWarning, "", why});
  add("WORLD_SIZE", l.world_size, "SLURM_NTASKS: the step's tasks");
  add("LOCAL_WORLD_SIZE", l.local_world_size, l.local_world_size_var + ": the tasks on this node");
  if (auto addr = master_addr(o)) add("MASTER_ADDR", addr->first, addr->second + ": the step's first node");
  if (auto port = master_port(o))
    add("MASTER_PORT", *port, "15000 + the last four digits of SLURM_JOB_ID=" + *o.getenv("SLURM_JOB_ID") +
                                  " (as PyTorch Lightning derives it): the same for every task of the job");
  return d;
}

}  // namespace gpuenv
