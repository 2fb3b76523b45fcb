#include "decide/fleet/job_ledger.h"

#include <gtest/gtest.h>

namespace gpuenv::fleet {
namespace {

constexpr std::uint64_t kGiB = std::uint64_t(1) << 30;

DeviceReading h200(int index, double util, double energy_j) {
  DeviceReading d;
  d.gpu = index;
  d.uuid = "GPU-" + std::to_string(index);
  d.name = "NVIDIA H200";
  d.up = true;
  d.utilization_ratio = util;
  d.energy_joules = energy_j;
  d.power_watts = 100 + 500 * util;
  d.memory_total_bytes = 141 * kGiB;
  d.sm_clock_hz = 1980000000;
  d.health.clock_events = 0;
  d.processes = std::vector<GpuProcess>{};
  return d;
}

GpuProcess proc(std::uint32_t pid, std::uint64_t mem, std::optional<double> sm = std::nullopt) {
  return {pid, mem, sm};
}

JobOwner slurm(const std::string& job, const std::string& user) {
  JobOwner o;
  o.scheduler = "slurm";
  o.job = job;
  o.user = user;
  o.source = "cgroup";
  return o;
}

// A node sampled every 5 s; each round's devices are made by `devices(round)`.
struct Node {
  JobLedger ledger;
  double t = 100;
  explicit Node(LedgerOptions o = {}) : ledger(o) {}

  void round(std::vector<DeviceReading> devices, std::map<std::pair<std::size_t, std::uint32_t>, JobOwner> owners,
             std::map<JobKey, JobCpuReading> cpu = {}) {
    Readings r;
    r.devices = std::move(devices);
    r.sampled_at = t;
    LedgerRound in{&r, std::move(owners), std::move(cpu), 1.7e9 + t};
    ledger.add_round(in);
    t += 5;
  }
  std::optional<JobView> job(const std::string& id) const {
    for (const auto& v : ledger.jobs())
      if (v.owner.job == id) return v;
    return std::nullopt;
  }
};

TEST(JobLedger, HeldSecondsEnergyAndMemoryOfOneJob) {
  Node node;
  for (int i = 0; i < 5; ++i) {
    DeviceReading d = h200(0, 0.9, 1000.0 + 3000.0 * i);
    d.processes->push_back(proc(42, 20 * kGiB));
    node.round({d}, {{{0, 42}, slurm("1234", "alice")}});
  }
  std::optional<JobView> j = node.job("1234");
  ASSERT_TRUE(j);
  ASSERT_EQ(j->gpus.size(), 1u);
  EXPECT_DOUBLE_EQ(j->gpus[0].gpu_seconds, 20);  // the first round starts the clock
  EXPECT_DOUBLE_EQ(*j->gpus[0].energy_joules, 12000);
  EXPECT_FALSE(j->gpus[0].shared);
  EXPECT_DOUBLE_EQ(*j->gpus[0].utilization, 0.9);
  EXPECT_EQ(j->gpus[0].memory_peak_bytes, 20 * kGiB);
  EXPECT_EQ(j->processes, 1);
  EXPECT_EQ(j->owner.user, "alice");
  EXPECT_DOUBLE_EQ(j->start_unix, 1.7e9 + 100);
  ASSERT_EQ(node.ledger.hpc_jobs().at(0), std::vector<std::string>{"1234"});
}

// Two jobs on one GPU: the energy goes by their SM samples, and both are marked shared.
TEST(JobLedger, SharedGpuEnergySplitsByUtilisation) {
  Node node;
  for (int i = 0; i < 3; ++i) {
    DeviceReading d = h200(0, 0.8, 1000.0 * i);
    d.processes = std::vector<GpuProcess>{proc(1, kGiB, 0.6), proc(2, 3 * kGiB, 0.2)};
    node.round({d}, {{{0, 1}, slurm("a", "u")}, {{0, 2}, slurm("b", "v")}});
  }
  auto a = node.job("a"), b = node.job("b");
  ASSERT_TRUE(a && b);
  EXPECT_DOUBLE_EQ(*a->gpus[0].energy_joules, 1500);
  EXPECT_DOUBLE_EQ(*b->gpus[0].energy_joules, 500);
  EXPECT_TRUE(a->gpus[0].shared && b->gpus[0].shared);
  EXPECT_DOUBLE_EQ(*a->gpus[0].utilization, 0.6);  // its own samples, not the GPU's 0.8
  EXPECT_FALSE(a->gpus[0].sm_active);               // the GPU's GPM is not one job's
  EXPECT_EQ(b->gpus[0].memory_bytes, 3 * kGiB);
  EXPECT_EQ(node.ledger.hpc_jobs().at(0), (std::vector<std::string>{"a", "b"}));
}

// Without per-process samples a shared GPU's energy is split evenly, and no utilisation is made up.
TEST(JobLedger, SharedWithoutSamplesSplitsEvenly) {
  Node node;
  for (int i = 0; i < 2; ++i) {
    DeviceReading d = h200(0, 0.8, 900.0 * i);
    d.processes = std::vector<GpuProcess>{proc(1, kGiB), proc(2, kGiB), proc(3, kGiB)};
    node.round({d}, {{{0, 1}, slurm("a", "u")}, {{0, 2}, slurm("b", "v")}, {{0, 3}, slurm("b", "v")}});
  }
  EXPECT_DOUBLE_EQ(*node.job("a")->gpus[0].energy_joules, 450);
  EXPECT_DOUBLE_EQ(*node.job("b")->gpus[0].energy_joules, 450);
  EXPECT_FALSE(node.job("a")->gpus[0].utilization);
  EXPECT_EQ(node.job("b")->processes, 2);
}

// A process nobody could place is the "unknown" job's, never dropped.
TEST(JobLedger, UnattributedProcessesAreUnknown) {
  Node node;
  DeviceReading d = h200(0, 0.5, 0);
  d.processes->push_back(proc(7, kGiB));
  node.round({d}, {});
  auto u = node.job("unknown");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->owner.scheduler, "unknown");
  EXPECT_EQ(u->gpus[0].memory_bytes, kGiB);
  EXPECT_TRUE(node.ledger.hpc_jobs().empty());
}

// A MIG-enabled GPU's processes are counted on its MIG devices, not twice.
TEST(JobLedger, MigProcessesCountOnTheirDevice) {
  Node node;
  DeviceReading gpu = h200(0, 0.5, 0), mig = h200(0, 0.5, 0);
  gpu.processes->push_back(proc(9, kGiB));
  mig.mig = 1;
  mig.uuid = "MIG-1";
  mig.energy_joules.reset();
  mig.processes->push_back(proc(9, kGiB));
  node.round({gpu, mig}, {{{1, 9}, slurm("m", "u")}, {{0, 9}, slurm("m", "u")}});
  auto m = node.job("m");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->gpus.size(), 1u);
  EXPECT_EQ(m->gpus[0].uuid, "MIG-1");
  EXPECT_FALSE(m->gpus[0].energy_joules);  // NVML counts no energy per MIG device
}

// A job alone on a MIG device: NVML gives the device no utilisation, GPM's
// graphics-engine activity of its instance stands in, and the job is judged.
TEST(JobLedger, AMigDeviceIsJudgedByItsGpmActivity) {
  Node node;
  for (int i = 0; i < 8; ++i) {
    DeviceReading gpu = h200(0, 0, 0), mig = h200(0, 0, 0);
    gpu.utilization_ratio.reset();  // a GPU in MIG mode: none either
    mig.mig = 0, mig.uuid = "MIG-0", mig.memory_total_bytes = 40 * kGiB;
    mig.utilization_ratio.reset(), mig.energy_joules.reset();
    mig.gpm_gr_engine_active = 0.97, mig.gpm_sm_active = 0.92, mig.gpm_tensor_active = 0.88;
    mig.processes->push_back(proc(9, 30 * kGiB));
    node.round({gpu, mig}, {{{1, 9}, slurm("m", "u")}});
  }
  auto m = node.job("m");
  ASSERT_TRUE(m);
  EXPECT_DOUBLE_EQ(*m->gpus[0].utilization, 0.97);
  EXPECT_EQ(m->verdict.name, "busy") << m->verdict.evidence;
  // Without GPM (a MIG device before Hopper) nothing is made up.
  Node old;
  for (int i = 0; i < 8; ++i) {
    DeviceReading mig = h200(0, 0, 0);
    mig.mig = 0, mig.uuid = "MIG-0";
    mig.utilization_ratio.reset(), mig.energy_joules.reset();
    mig.processes->push_back(proc(9, 10 * kGiB));
    old.round({mig}, {{{0, 9}, slurm("m", "u")}});
  }
  EXPECT_FALSE(old.job("m")->gpus[0].utilization);
}

// Input-bound from the exporter alone: the GPU mostly idle while the job's one
// process keeps a core busy, the verdict of `gpuenv run`.
TEST(JobLedger, JudgesWithRunsVerdicts) {
  Node node;
  JobOwner o = slurm("77", "bob");
  for (int i = 0; i < 12; ++i) {
    DeviceReading d = h200(0, 0.1, 0);
    d.processes->push_back(proc(5, 8 * kGiB));
    JobCpuReading cpu{5.0 * i, 16, {{5, 5.0 * i}}};
    node.round({d}, {{{0, 5}, o}}, {{job_key(o), cpu}});
    if (i == 3) {
      EXPECT_EQ(node.job("77")->verdict.name, "too-short") << node.job("77")->verdict.evidence;
    }
  }
  auto j = node.job("77");
  EXPECT_EQ(j->verdict.name, "input-bound") << j->verdict.evidence;
  EXPECT_NE(j->verdict.fix.find("num_workers=15"), std::string::npos) << j->verdict.fix;
  EXPECT_DOUBLE_EQ(*j->cpu_cores_used, 1);
  EXPECT_DOUBLE_EQ(*j->cpu_cores_allowed, 16);
}

TEST(JobLedger, IdleHeldGpu) {
  Node node;
  for (int i = 0; i < 10; ++i) {
    DeviceReading d = h200(0, 0, 0);
    d.processes->push_back(proc(5, 2 * kGiB));
    node.round({d}, {{{0, 5}, slurm("9", "c")}});
  }
  EXPECT_EQ(node.job("9")->verdict.name, "idle-held") << node.job("9")->verdict.evidence;
}

// An ended job stays for the retention, then its series go.
TEST(JobLedger, EndedJobsExpire) {
  Node node(LedgerOptions{.retention_s = 12});
  DeviceReading d = h200(0, 0.5, 0);
  d.processes->push_back(proc(5, kGiB));
  node.round({d}, {{{0, 5}, slurm("1", "c")}});
  DeviceReading empty = h200(0, 0, 0);
  node.round({empty}, {});  // t+5: ended
  ASSERT_TRUE(node.job("1"));
  EXPECT_TRUE(node.job("1")->ended);
  node.round({empty}, {});  // t+10
  node.round({empty}, {});  // t+15: 10 s after the end
  EXPECT_TRUE(node.job("1"));
  node.round({empty}, {});  // t+20: 15 s after
  EXPECT_FALSE(node.job("1"));
}

// At most max_jobs are tracked: the rest go to "overflow".
TEST(JobLedger, JobsAreBounded) {
  Node node(LedgerOptions{.max_jobs = 2});
  DeviceReading d = h200(0, 0.5, 0);
  std::map<std::pair<std::size_t, std::uint32_t>, JobOwner> owners;
  for (std::uint32_t pid = 1; pid <= 5; ++pid) {
    d.processes->push_back(proc(pid, kGiB));
    owners[{0, pid}] = slurm(std::to_string(pid), "u");
  }
  node.round({d}, owners);
  std::vector<JobView> jobs = node.ledger.jobs();
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_TRUE(node.job("overflow"));
  EXPECT_EQ(node.job("overflow")->processes, 3);
}

// Readings not newer than the last are ignored (no negative seconds).
TEST(JobLedger, OldRoundsAreIgnored) {
  Node node;
  DeviceReading d = h200(0, 0.5, 0);
  d.processes->push_back(proc(5, kGiB));
  node.round({d}, {{{0, 5}, slurm("1", "c")}});
  node.round({d}, {{{0, 5}, slurm("1", "c")}});
  node.t -= 20;
  node.round({d}, {{{0, 5}, slurm("1", "c")}});
  EXPECT_DOUBLE_EQ(node.job("1")->gpus[0].gpu_seconds, 5);
}

}  // namespace
}  // namespace gpuenv::fleet
