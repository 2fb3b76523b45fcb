#include <gtest/gtest.h>

#include "builders.h"
#include "decide/launcher_env.h"
#include "decide/rules/rules.h"
#include "rule_expect.h"

namespace gpuenv {
namespace {

using namespace testing;

// Task `procid` of an srun step of 4 tasks on 2 nodes ("gpu[07-08]").
Env srun_task(int procid) {
  return {{"SLURM_STEP_ID", "0"},          {"SLURM_JOB_ID", "4242917"},
          {"SLURM_PROCID", std::to_string(procid)}, {"SLURM_LOCALID", std::to_string(procid % 2)},
          {"SLURM_NTASKS", "4"},           {"SLURM_NODEID", std::to_string(procid / 2)},
          {"SLURM_NNODES", "2"},           {"SLURM_STEP_TASKS_PER_NODE", "2(x2)"},
          {"SLURM_STEP_NODELIST", "gpu[07-08]"}};
}

Env with(Env e, const Env& more) {
  for (const auto& [k, v] : more) e[k] = v;
  return e;
}

std::vector<RuleCase> ranks_rows() {
  return {
      {"no launcher: nothing", machine::h100(), {}, {}},
      {"task 3 of an srun step gets env:// init's variables",
       machine::h100(),
       srun_task(3),
       {{"RANK", "3"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_WORLD_SIZE", "2"},
        {"MASTER_ADDR", "gpu07"}, {"MASTER_PORT", "17917"}},
       {},
       {},
       {{"RANK", "SLURM_PROCID"}, {"MASTER_ADDR", "SLURM_STEP_NODELIST=gpu[07-08]: the step's first node"},
        {"MASTER_PORT", "15000 + the last four digits of SLURM_JOB_ID=4242917"},
        {"LOCAL_WORLD_SIZE", "SLURM_STEP_TASKS_PER_NODE"}}},
      {"what is set stays: a user's MASTER_PORT and RANK",
       machine::h100(),
       with(srun_task(0), {{"MASTER_PORT", "29500"}, {"RANK", "0"}}),
       {{"LOCAL_RANK", "0"}, {"WORLD_SIZE", "4"}, {"LOCAL_WORLD_SIZE", "2"}, {"MASTER_ADDR", "gpu07"}}},
      {"torchrun under srun: torchrun's ranks, none from Slurm",
       machine::h100(),
       with(srun_task(0), {{"LOCAL_RANK", "0"}, {"LOCAL_WORLD_SIZE", "8"}, {"TORCHELASTIC_RUN_ID", "x"}}),
       {}},
      {"the batch script (no step) is no task",
       machine::h100(),
       {{"SLURM_JOB_ID", "7"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}},
       {}},
      {"a malformed node list gives no MASTER_ADDR; the job's list is the fallback",
       machine::h100(),
       with(srun_task(0), {{"SLURM_STEP_NODELIST", "gpu[07"}}),
       {{"RANK", "0"}, {"LOCAL_RANK", "0"}, {"WORLD_SIZE", "4"}, {"LOCAL_WORLD_SIZE", "2"},
        {"MASTER_PORT", "17917"}}},
      {"a short job id",
       machine::h100(),
       with(srun_task(1), {{"SLURM_JOB_ID", "12"}, {"SLURM_STEP_NODELIST", "node1"}}),
       {{"RANK", "1"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_WORLD_SIZE", "2"},
        {"MASTER_ADDR", "node1"}, {"MASTER_PORT", "15012"}}},
      // Slurm bound one GPU to each task (--gpus-per-task=1): LOCAL_RANK
      // stays the rank on the node (torchrun's and Lightning's meaning), and
      // the note says set_device(LOCAL_RANK) fails (issue 37).
      {"one GPU bound per task: LOCAL_RANK=1 is no device index, and a note says so",
       machine::h100(8),
       with(srun_task(1), {{"CUDA_VISIBLE_DEVICES", "1"}, {"SLURM_STEP_GPUS", "1"}}),
       {{"RANK", "1"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_WORLD_SIZE", "2"},
        {"MASTER_ADDR", "gpu07"}, {"MASTER_PORT", "17917"}},
       {{Severity::kWarning, "LOCAL_RANK=1 (from SLURM_LOCALID) is this process's rank on the node, but it sees 1 GPU "
                             "(CUDA_VISIBLE_DEVICES=1), so torch.cuda.set_device(LOCAL_RANK) fails"}}},
      {"two GPUs per task: LOCAL_RANK=1 is still an index, no note",
       machine::h100(8),
       with(srun_task(1), {{"CUDA_VISIBLE_DEVICES", "2,3"}, {"SLURM_STEP_GPUS", "2,3"}}),
       {{"RANK", "1"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_WORLD_SIZE", "2"},
        {"MASTER_ADDR", "gpu07"}, {"MASTER_PORT", "17917"}}},
  };
}

TEST(Ranks, SrunTasksGetTorchDistributedsVariables) { run_table(rule_ranks, ranks_rows()); }

TEST(Ranks, FirstHostOfSlurmHostlists) {
  const std::pair<std::string, std::optional<std::string>> cases[] = {
      {"node1", "node1"},
      {"gpu[07-09,12],cpu1", "gpu07"},
      {"gpu[12,07-09]", "gpu12"},  // Slurm's order, not sorted
      {"rack[1-2]-n[01-04]", "rack1-n01"},
      {"a.example.com,b", "a.example.com"},
      {"gpu[07", std::nullopt},
      {"gpu[]", std::nullopt},
      {"gpu[a-b]", std::nullopt},
      {"$(reboot)", std::nullopt},
      {"", std::nullopt},
  };
  for (const auto& [list, host] : cases) EXPECT_EQ(slurm_first_host(list), host) << list;
}

}  // namespace
}  // namespace gpuenv
