#include "decide/launcher_env.h"

#include <gtest/gtest.h>

namespace gpuenv {
namespace {

using Env = std::map<std::string, std::string>;
using Int = std::optional<int>;

Options with(Env env) {
  Options o;
  o.env = std::move(env);
  return o;
}

struct LauncherRow {
  std::string description;
  Env env;
  Engine engine;
  Int rank, local_rank, local_world_size, world_size, node_rank, nnodes;
  std::string summary;  // launch_summary, exactly
  std::optional<std::string> bound_gpus = {};
  std::vector<std::string> malformed = {};  // the names, in order
};

const Env kSlurmStep = {{"SLURM_PROCID", "1"}, {"SLURM_LOCALID", "1"}, {"SLURM_NTASKS", "2"},
                        {"SLURM_STEP_ID", "0"}, {"SLURM_STEP_TASKS_PER_NODE", "2"}, {"SLURM_NODEID", "0"},
                        {"SLURM_NNODES", "1"}, {"SLURM_JOB_ID", "7"}};
const std::string kSlurmSummary = "Slurm (SLURM_PROCID=1, SLURM_LOCALID=1, SLURM_NTASKS=2)";

Env plus(Env a, const Env& b) {
  for (const auto& [k, v] : b) a[k] = v;
  return a;
}

std::vector<LauncherRow> rows() {
  const Env torchrun = {{"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "2"}, {"RANK", "3"}, {"WORLD_SIZE", "4"},
                        {"GROUP_RANK", "1"}, {"GROUP_WORLD_SIZE", "2"}, {"TORCHELASTIC_RUN_ID", "j"}};
  const std::string torchrun_summary =
      "torchrun (LOCAL_RANK=1, LOCAL_WORLD_SIZE=2, RANK=3, WORLD_SIZE=4, GROUP_RANK=1, TORCHELASTIC_RUN_ID=j)";
  // What the training operator (kubeflow.org/v1) gives pod 1 of 2 with nprocPerNode 4.
  const Env pytorchjob = {{"PET_NNODES", "2"}, {"PET_NPROC_PER_NODE", "4"}, {"PET_NODE_RANK", "1"},
                          {"MASTER_ADDR", "job-master-0"}, {"MASTER_PORT", "23456"}, {"WORLD_SIZE", "8"},
                          {"RANK", "1"}};
  return {
      {"nothing set", {}, Engine::kNone, {}, {}, {}, {}, {}, {}, ""},
      {"a WORLD_SIZE alone is read, with no engine named", {{"WORLD_SIZE", "4"}}, Engine::kNone, {}, {}, {}, 4,
       {}, {}, ""},
      {"torchrun", torchrun, Engine::kTorchrun, 3, 1, 2, 4, 1, 2, torchrun_summary},
      {"Kubeflow PyTorchJob before torchrun: the launcher, no local rank", pytorchjob, Engine::kKubeflow, {}, {},
       4, 8, 1, 2,
       "Kubeflow PyTorchJob (PET_NNODES=2, PET_NPROC_PER_NODE=4, PET_NODE_RANK=1, WORLD_SIZE=8, RANK=1, "
       "MASTER_ADDR=job-master-0, MASTER_PORT=23456)"},
      {"Kubeflow Trainer: no WORLD_SIZE, so nodes x processes per node",
       {{"PET_NNODES", "2"}, {"PET_NPROC_PER_NODE", "4"}, {"PET_NODE_RANK", "0"}, {"PET_MASTER_ADDR", "m"}},
       Engine::kKubeflow, {}, {}, 4, 8, 0, 2,
       "Kubeflow PyTorchJob (PET_NNODES=2, PET_NPROC_PER_NODE=4, PET_NODE_RANK=0, PET_MASTER_ADDR=m)"},
      {"Kubeflow elastic: a node range and nproc auto are no fixed counts, and not malformed",
       {{"PET_NNODES", "1:4"}, {"PET_NPROC_PER_NODE", "auto"}}, Engine::kKubeflow, {}, {}, {}, {}, {}, {},
       "Kubeflow PyTorchJob (PET_NNODES=1:4, PET_NPROC_PER_NODE=auto)"},
      {"torchrun inside a PyTorchJob: torchrun's ranks, both named",
       plus(pytorchjob, {{"LOCAL_RANK", "2"}, {"LOCAL_WORLD_SIZE", "4"}, {"RANK", "6"}}), Engine::kTorchrun, 6, 2,
       4, 8, {}, {},
       "torchrun (LOCAL_RANK=2, LOCAL_WORLD_SIZE=4, RANK=6, WORLD_SIZE=8, MASTER_ADDR=job-master-0, "
       "MASTER_PORT=23456), inside Kubeflow PyTorchJob (PET_NNODES=2, PET_NPROC_PER_NODE=4, PET_NODE_RANK=1)"},
      {"JobSet: the completion index is the node rank",
       {{"JOB_COMPLETION_INDEX", "3"}, {"JOBSET_NAME", "train"}, {"REPLICATED_JOB_NAME", "workers"}},
       Engine::kJobSet, {}, {}, {}, {}, 3, {},
       "JobSet (JOB_COMPLETION_INDEX=3, JOBSET_NAME=train, REPLICATED_JOB_NAME=workers)"},
      {"an Indexed Job without JobSet's names", {{"JOB_COMPLETION_INDEX", "0"}}, Engine::kJobSet, {}, {}, {}, {}, 0,
       {}, "Indexed Job (JobSet's, or any) (JOB_COMPLETION_INDEX=0)"},
      {"Slurm step", kSlurmStep, Engine::kSlurm, 1, 1, 2, 2, 0, 1, kSlurmSummary},
      {"Slurm: node 2 of an uneven step runs 2 tasks",
       plus(kSlurmStep, {{"SLURM_STEP_TASKS_PER_NODE", "4(x2),2"}, {"SLURM_NODEID", "2"}, {"SLURM_NNODES", "3"}}),
       Engine::kSlurm, 1, 1, 2, 2, 2, 3, kSlurmSummary},
      {"Slurm: SLURM_NTASKS_PER_NODE when the step's layout is absent",
       [] {
         Env e = plus(kSlurmStep, {{"SLURM_NTASKS_PER_NODE", "8"}});
         e.erase("SLURM_STEP_TASKS_PER_NODE");
         return e;
       }(),
       Engine::kSlurm, 1, 1, 8, 2, 0, 1, kSlurmSummary},
      {"Slurm's gres binding", plus(kSlurmStep, {{"CUDA_VISIBLE_DEVICES", "1"}, {"SLURM_STEP_GPUS", "1"}}),
       Engine::kSlurm, 1, 1, 2, 2, 0, 1,
       "Slurm (SLURM_PROCID=1, SLURM_LOCALID=1, SLURM_NTASKS=2, SLURM_STEP_GPUS=1)", "1"},
      {"CUDA_VISIBLE_DEVICES without Slurm's GPU variables is the user's", plus(kSlurmStep, {{"CUDA_VISIBLE_DEVICES", "1"}}),
       Engine::kSlurm, 1, 1, 2, 2, 0, 1, kSlurmSummary},
      {"Slurm batch script: SLURM_PROCID=0 but no step, so no task",
       {{"SLURM_PROCID", "0"}, {"SLURM_LOCALID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_JOB_ID", "7"},
        {"SLURM_TASKS_PER_NODE", "2"}, {"CUDA_VISIBLE_DEVICES", "0,1"}, {"SLURM_JOB_GPUS", "0,1"}},
       Engine::kSlurm, {}, {}, {}, {}, {}, {},
       "Slurm batch script (SLURM_JOB_ID=7, SLURM_NTASKS=2, no SLURM_STEP_ID: srun starts the tasks)", "0,1"},
      {"torchrun inside Slurm: torchrun's local rank wins, both named",
       plus(kSlurmStep, {{"LOCAL_RANK", "3"}, {"LOCAL_WORLD_SIZE", "4"}}), Engine::kTorchrun, {}, 3, 4, {}, {}, {},
       "torchrun (LOCAL_RANK=3, LOCAL_WORLD_SIZE=4), inside " + kSlurmSummary},
      {"malformed Slurm variables read as unset",
       plus(kSlurmStep, {{"SLURM_LOCALID", "x"}, {"SLURM_STEP_TASKS_PER_NODE", "2(x"}}), Engine::kSlurm, 1, {},
       {}, 2, 0, 1, "Slurm (SLURM_PROCID=1, SLURM_LOCALID=x, SLURM_NTASKS=2)", {},
       {"SLURM_LOCALID", "SLURM_STEP_TASKS_PER_NODE"}},
      {"PET_NNODES x PET_NPROC_PER_NODE beyond any world size: unknown, and said",
       {{"PET_NNODES", "999999"}, {"PET_NPROC_PER_NODE", "999999"}}, Engine::kKubeflow, {}, {}, 999999, {}, {},
       999999, "Kubeflow PyTorchJob (PET_NNODES=999999, PET_NPROC_PER_NODE=999999)", {}, {"WORLD_SIZE"}},
      {"PET_NNODES x PET_NPROC_PER_NODE at the largest count",
       {{"PET_NNODES", "1000"}, {"PET_NPROC_PER_NODE", "999"}}, Engine::kKubeflow, {}, {}, 999, 999000, {}, 1000,
       "Kubeflow PyTorchJob (PET_NNODES=1000, PET_NPROC_PER_NODE=999)"},
      {"PET_NNODES x PET_NPROC_PER_NODE one past the largest count",
       {{"PET_NNODES", "1000"}, {"PET_NPROC_PER_NODE", "1000"}}, Engine::kKubeflow, {}, {}, 1000, {}, {}, 1000,
       "Kubeflow PyTorchJob (PET_NNODES=1000, PET_NPROC_PER_NODE=1000)", {}, {"WORLD_SIZE"}},
      {"malformed torchrun variables", {{"LOCAL_RANK", "-1"}, {"WORLD_SIZE", "0"}}, Engine::kTorchrun, {}, {}, {},
       {}, {}, {}, "torchrun (LOCAL_RANK=-1, WORLD_SIZE=0)", {}, {"LOCAL_RANK", "WORLD_SIZE"}},
  };
}

TEST(Launch, RecognisesEachEngineAndReadsItsRanks) {
  for (const LauncherRow& r : rows()) {
    SCOPED_TRACE(r.description);
    LaunchEnv l = launch_env(with(r.env));
    EXPECT_EQ(l.engine, r.engine);
    EXPECT_EQ(l.rank, r.rank);
    EXPECT_EQ(l.local_rank, r.local_rank);
    EXPECT_EQ(l.local_world_size, r.local_world_size);
    EXPECT_EQ(l.world_size, r.world_size);
    EXPECT_EQ(l.node_rank, r.node_rank);
    EXPECT_EQ(l.nnodes, r.nnodes);
    EXPECT_EQ(launch_summary(l), r.summary);
    EXPECT_EQ(l.bound_gpus, r.bound_gpus);
    std::vector<std::string> bad;
    for (const auto& [name, why] : l.malformed) bad.push_back(name);
    EXPECT_EQ(bad, r.malformed);
  }
}

TEST(Launch, MalformedMessagesNameTheVariableAndTheForm) {
  LaunchEnv l = launch_env(with(plus(kSlurmStep, {{"SLURM_STEP_TASKS_PER_NODE", "two"}})));
  EXPECT_EQ(l.malformed.at("SLURM_STEP_TASKS_PER_NODE"),
            "SLURM_STEP_TASKS_PER_NODE=two does not give node 0 a task count (Slurm writes \"2\" or \"2(x3),1\")");
  EXPECT_EQ(l.local_world_size_var, "SLURM_STEP_TASKS_PER_NODE");
  EXPECT_EQ(l.local_rank_var, "SLURM_LOCALID");
}

TEST(Launch, ProductBeyondTheLargestCountIsNamed) {
  LaunchEnv l = launch_env(with({{"PET_NNODES", "999999"}, {"PET_NPROC_PER_NODE", "999999"}}));
  EXPECT_EQ(l.malformed.at("WORLD_SIZE"),
            "PET_NNODES=999999 x PET_NPROC_PER_NODE=999999 is more than 999999 processes: the world size is left "
            "unknown");
}

TEST(Launch, SlurmCpusPerTaskOnlyInAStep) {
  EXPECT_EQ(launch_env(with(plus(kSlurmStep, {{"SLURM_CPUS_PER_TASK", "4"}}))).cpus_per_task, 4);
  EXPECT_EQ(launch_env(with({{"SLURM_PROCID", "0"}, {"SLURM_CPUS_PER_TASK", "4"}})).cpus_per_task, std::nullopt);
}

TEST(Launch, SlurmTasksPerNodeForm) {
  EXPECT_EQ(slurm_tasks_on_node("2", 0), 2);
  EXPECT_EQ(slurm_tasks_on_node("2", 1), std::nullopt);
  for (int node : {0, 1, 2}) EXPECT_EQ(slurm_tasks_on_node("2(x3),1", node), 2) << node;
  EXPECT_EQ(slurm_tasks_on_node("2(x3),1", 3), 1);
  EXPECT_EQ(slurm_tasks_on_node("2(x3),1", 4), std::nullopt);
  // 3,000 entries of 999999 nodes each: more nodes than an int counts, and no overflow (UBSan).
  std::string many = "1(x999999)";
  for (int i = 1; i < 3000; ++i) many += ",1(x999999)";
  EXPECT_EQ(slurm_tasks_on_node(many, 0), 1);
  EXPECT_EQ(slurm_tasks_on_node(many, 999999), 1);
  EXPECT_EQ(slurm_tasks_on_node("2(x999999),3", 999999), 3);
  LaunchEnv l = launch_env(with(plus(kSlurmStep, {{"SLURM_STEP_TASKS_PER_NODE", many}, {"SLURM_NODEID", "999999"}})));
  EXPECT_EQ(l.local_world_size, 1);
  for (const char* bad : {"", "(x2)", "2(x)", "2(x2", "2(y2)", "0", "2,,1", "-1", "2(x0)", "2 "})
    EXPECT_EQ(slurm_tasks_on_node(bad, 0), std::nullopt) << bad;
}

TEST(Launch, EngineIds) {
  EXPECT_STREQ(engine_id(Engine::kSlurm), "slurm");
  EXPECT_STREQ(engine_id(Engine::kKubeflow), "kubeflow");
  EXPECT_STREQ(engine_id(Engine::kNone), "");
}

}  // namespace
}  // namespace gpuenv
