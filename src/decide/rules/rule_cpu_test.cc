#include <gtest/gtest.h>

#include "builders.h"
#include "decide/rules/rules.h"
#include "rule_expect.h"

namespace gpuenv {
namespace {

using namespace testing;

std::map<std::string, std::string> omp(int n) { return {{"OMP_NUM_THREADS", std::to_string(n)}}; }

std::map<std::string, std::string> torchrun(int rank, int local_world_size) {
  return {{"LOCAL_RANK", std::to_string(rank)}, {"LOCAL_WORLD_SIZE", std::to_string(local_world_size)}};
}

Machine with_host(Machine m, std::optional<int> usable, std::optional<int> online) {
  m.host.usable_cpus = usable;
  m.host.online_cpus = online;
  return m;
}

Machine with_affinity(Machine m, std::vector<int> cpus) {
  m.host.affinity_cpus = std::move(cpus);
  return m;
}

// a100_nvlink_8: 2 sockets x 64 CPUs; GPUs 0-3 near CPUs 0-63, GPUs 4-7 near 64-127.
std::vector<RuleCase> sharing_rows() {
  return {
      {"one GPU takes every usable CPU",
       machine::h100(),
       {},
       omp(112),
       {},
       {},
       {{"OMP_NUM_THREADS", "112 usable CPUs / 1 GPU process = 112 threads each (torchrun would set 1"}}},
      {"eight GPUs share the CPUs", machine::h100(8), {}, omp(14)},
      {"three MIG devices are one process: CUDA gives a process one of them", machine::a100_mig(), {}, omp(32)},
      {"the cgroup quota, not the core count, is what is usable",
       machine::h100(8).cgroup_quota(16),
       {},
       omp(2)},
      {"a quota below the GPU count still gives one thread", machine::h100(8).cgroup_quota(4), {}, omp(1)},
      {"LOCAL_WORLD_SIZE counts the processes", machine::h100(8), {{"LOCAL_WORLD_SIZE", "2"}}, omp(56)},
      {"CUDA_VISIBLE_DEVICES counts the processes",
       machine::h100(8),
       {{"CUDA_VISIBLE_DEVICES", "0,1,2,3"}},
       omp(28)},
      {"no GPU: one process, not a GPU process",
       machine::none(),
       {},
       omp(32),
       {},
       {},
       {{"OMP_NUM_THREADS", "32 usable CPUs / 1 process = 32 threads each"}}},
      {"usable unknown: online CPUs", with_host(machine::h100(), std::nullopt, 8), {}, omp(8)},
      {"CPU count unknown: leave it",
       with_host(machine::h100(), std::nullopt, std::nullopt),
       {},
       {},
       {{Severity::kInfo, "OMP_NUM_THREADS left alone: the number of usable CPUs is unknown"}}},
      {"a nonsense CPU count is unknown",
       with_host(machine::h100(), -4, std::nullopt),
       {},
       {},
       {{Severity::kInfo, "OMP_NUM_THREADS left alone"}}},
      {"malformed LOCAL_WORLD_SIZE",
       machine::h100(8),
       {{"LOCAL_WORLD_SIZE", "eight"}},
       omp(14),
       {{Severity::kWarning, "LOCAL_WORLD_SIZE=eight is not a positive integer: counting one process per"}}},
  };
}

Machine with_quota(Machine m, double quota) {
  m.host.cgroup_cpu_quota = quota;
  return m;
}

std::vector<RuleCase> binding_rows() {
  return {
      {"torchrun rank 0 of 8: first quarter of socket 0",
       machine::a100_nvlink_8(),
       torchrun(0, 8),
       omp(16),
       {},
       cpu_range(0, 16),
       {{"OMP_NUM_THREADS", "16 threads: one thread per CPU of this rank's slice"}}},
      {"torchrun rank 5 of 8: second quarter of socket 1",
       machine::a100_nvlink_8(),
       torchrun(5, 8),
       omp(16),
       {},
       cpu_range(80, 16)},
      {"the quota caps threads, not the slice",
       machine::a100_nvlink_8().cgroup_quota(32),
       torchrun(5, 8),
       omp(4),
       {},
       cpu_range(80, 16),
       {{"OMP_NUM_THREADS", "4 threads: the cgroup CPU quota shared by 8 processes"}}},
      {"an absurd quota caps nothing",
       with_quota(machine::a100_nvlink_8(), 1e300),
       torchrun(5, 8),
       omp(16),
       {},
       cpu_range(80, 16)},
      {"two ranks on GPUs 4,5 split socket 1",
       machine::a100_nvlink_8(),
       {{"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "2"}, {"CUDA_VISIBLE_DEVICES", "4,5"}},
       omp(32),
       {},
       cpu_range(96, 32)},
      {"only CPUs this process may use are sliced",
       with_affinity(machine::a100_nvlink_8(), cpu_range(0, 32)),
       torchrun(1, 8),
       omp(8),
       {},
       cpu_range(8, 8)},
      {"more ranks than CPUs: they share",
       MachineBuilder().cpus(1, 2).gpus(models::h100(), 4),
       torchrun(3, 4),
       omp(1),
       {},
       std::vector<int>{0, 1}},
      {"GPU CPUs unknown (CUDA only): no binding",
       machine::jetson_orin(),
       torchrun(0, 1),
       omp(12),
       {{Severity::kInfo,
         "no CPU binding: the CPUs local to GPU 0 or this process's CPU affinity are unknown"}}},
      {"malformed LOCAL_RANK",
       machine::a100_nvlink_8(),
       {{"LOCAL_RANK", "x"}, {"LOCAL_WORLD_SIZE", "8"}},
       omp(16),
       {{Severity::kWarning, "LOCAL_RANK=x is not a non-negative integer: no CPU binding"}}},
      {"LOCAL_RANK past the visible GPUs",
       machine::h100(2),
       torchrun(3, 4),
       omp(28),
       {{Severity::kWarning, "LOCAL_RANK=3 but 2 device(s) are visible and LOCAL_WORLD_SIZE is 4"}}},
      {"LOCAL_RANK past LOCAL_WORLD_SIZE",
       machine::h100(8),
       torchrun(2, 2),
       omp(56),
       {{Severity::kWarning, "LOCAL_RANK=2 but 8 device(s) are visible and LOCAL_WORLD_SIZE is 2"}}},
  };
}

std::vector<int> cpus(std::vector<std::pair<int, int>> ranges) {
  std::vector<int> out;
  for (auto [first, count] : ranges)
    for (int c : cpu_range(first, count)) out.push_back(c);
  return out;
}

// With the physical cores sensed (Host::cpu_cores), threads count cores, as
// PyTorch's own default does: h100 is 2 sockets x 56 cores, 224 logical CPUs
// with SMT (core c's sibling is c + 112).
std::vector<RuleCase> core_rows() {
  MachineBuilder h100x8 = machine::h100(8).smt(2);
  return {
      {"SMT: one GPU takes every physical core, not every thread",
       machine::h100().smt(2),
       {},
       omp(112),
       {},
       {},
       {{"OMP_NUM_THREADS",
         "112 physical cores (224 logical CPUs) in this process's affinity / 1 GPU process = 112 "
         "threads each"}}},
      {"SMT: eight GPUs share the cores", h100x8, {}, omp(14)},
      {"no SMT, cores known: the same count, said exactly",
       machine::h100().smt(1),
       {},
       omp(112),
       {},
       {},
       {{"OMP_NUM_THREADS", "112 physical cores (112 logical CPUs) in this process's affinity"}}},
      {"SMT with a quota below the cores: the quota",
       machine::h100(8).smt(2).cgroup_quota(16.5),
       {},
       omp(2),
       {},
       {},
       {{"OMP_NUM_THREADS",
         "a cgroup CPU quota of 16.5 CPUs (112 physical cores (224 logical CPUs) in this process's "
         "affinity) / 8 GPU processes = 2 threads each"}}},
      {"SMT: a torchrun rank gets whole cores, both threads of each",
       h100x8,
       torchrun(1, 8),
       omp(14),
       {},
       cpus({{14, 14}, {126, 14}}),
       {{"OMP_NUM_THREADS", "14 threads: one thread per physical core of this rank's slice"}}},
      {"SMT: rank 7 on socket 1",
       h100x8,
       torchrun(7, 8),
       omp(14),
       {},
       cpus({{98, 14}, {210, 14}})},
  };
}

// An srun step's task: local task `local` of `tasks` on this node.
Env slurm(int local, int tasks, Env extra = {}) {
  Env e = {{"SLURM_PROCID", std::to_string(local)}, {"SLURM_LOCALID", std::to_string(local)},
           {"SLURM_NTASKS", std::to_string(tasks)}, {"SLURM_STEP_ID", "0"},
           {"SLURM_STEP_TASKS_PER_NODE", std::to_string(tasks)}, {"SLURM_NODEID", "0"}};
  for (const auto& [k, v] : extra) e[k] = v;
  return e;
}

// a100_nvlink_8 again: GPUs 0-3 near CPUs 0-63, GPUs 4-7 near 64-127.
std::vector<RuleCase> slurm_rows() {
  return {
      {"one task per GPU: the local rank picks the GPU, as under torchrun",
       machine::a100_nvlink_8(),
       slurm(5, 8),
       omp(16),
       {},
       cpu_range(80, 16),
       {{"OMP_NUM_THREADS", "16 threads: one thread per CPU of this rank's slice"}}},
      {"GPUs by gres for the whole step: still the local rank's",
       machine::a100_nvlink_8(),
       slurm(5, 8, {{"CUDA_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7"}, {"SLURM_STEP_GPUS", "0,1,2,3,4,5,6,7"}}),
       omp(16),
       {},
       cpu_range(80, 16)},
      {"Slurm bound one GPU to the task: pinned near it, its share of the threads",
       machine::a100_nvlink_8(),
       slurm(5, 8, {{"CUDA_VISIBLE_DEVICES", "5"}, {"SLURM_STEP_GPUS", "5"}}),
       omp(16),
       {},
       cpu_range(64, 64),
       {{"OMP_NUM_THREADS", "this task's share of the 128 CPUs of this process's affinity among 8 tasks"}}},
      {"a task with several GPUs (it starts torchrun): no binding",
       machine::a100_nvlink_8(),
       slurm(0, 1),
       omp(128),
       {{Severity::kInfo, "no CPU binding: Slurm runs 1 task on this node for 8 visible GPUs"}}},
      {"the batch script is no task: no binding, one process per GPU",
       machine::a100_nvlink_8(),
       {{"SLURM_PROCID", "0"}, {"SLURM_LOCALID", "0"}, {"SLURM_NTASKS", "8"}, {"SLURM_TASKS_PER_NODE", "8"}},
       omp(16)},
      {"SLURM_CPUS_PER_TASK caps the threads",
       machine::a100_nvlink_8(),
       slurm(5, 8, {{"SLURM_CPUS_PER_TASK", "4"}}),
       omp(4),
       {},
       cpu_range(80, 16),
       {{"OMP_NUM_THREADS", "4 threads: Slurm gives each task 4 CPUs (SLURM_CPUS_PER_TASK); without that cap, 16"}}},
      {"torchrun inside Slurm: torchrun's local rank wins",
       machine::a100_nvlink_8(),
       slurm(0, 1, torchrun(5, 8)),
       omp(16),
       {},
       cpu_range(80, 16)},
      {"more tasks than GPUs: the message names Slurm's variables",
       machine::h100(2),
       slurm(3, 4),
       omp(28),
       {{Severity::kWarning,
         "SLURM_LOCALID=3 but 2 device(s) are visible and SLURM_STEP_TASKS_PER_NODE is 4: this rank has no GPU"}}},
      {"malformed SLURM_LOCALID",
       machine::a100_nvlink_8(),
       slurm(0, 8, {{"SLURM_LOCALID", "zero"}}),
       omp(16),
       {{Severity::kWarning, "SLURM_LOCALID=zero is not a non-negative integer: no CPU binding"}}},
  };
}

TEST(Cpu, ThreadsShareTheUsableCpus) { run_table(rule_cpu, sharing_rows()); }

TEST(Cpu, SlurmTasksArePinnedLikeTorchrunRanks) { run_table(rule_cpu, slurm_rows()); }

TEST(Cpu, ThreadsCountPhysicalCores) { run_table(rule_cpu, core_rows()); }

TEST(Cpu, SmtBindingReasonCountsCores) {
  Decision d = rule_cpu(machine::h100(8).smt(2), options_with(torchrun(1, 8)));
  ASSERT_TRUE(d.binding);
  EXPECT_EQ(d.binding->reason,
            "GPU 1 is local to CPUs 0-55,112-167, shared by local ranks 0-3: local rank 1 gets "
            "14-27,126-139 (14 physical cores)");
}

TEST(Cpu, TorchrunRanksGetDisjointNumaLocalSlices) { run_table(rule_cpu, binding_rows()); }

TEST(Cpu, EightRanksOnTwoSocketsNeverOverlap) {
  std::set<int> seen;
  for (int rank = 0; rank < 8; ++rank) {
    Decision d = rule_cpu(machine::a100_nvlink_8(), options_with(torchrun(rank, 8)));
    ASSERT_TRUE(d.binding);
    EXPECT_EQ(d.binding->cpus.size(), 16u);
    for (int cpu : d.binding->cpus) EXPECT_TRUE(seen.insert(cpu).second) << "cpu " << cpu << " twice";
  }
  EXPECT_EQ(seen.size(), 128u);
}

TEST(Cpu, BindingReasonNamesTheSlice) {
  Decision d = rule_cpu(machine::a100_nvlink_8(), options_with(torchrun(5, 8)));
  ASSERT_TRUE(d.binding);
  EXPECT_EQ(d.binding->reason,
            "GPU 5 is local to CPUs 64-127, shared by local ranks 4-7: local rank 5 gets 80-95");
}

}  // namespace
}  // namespace gpuenv
