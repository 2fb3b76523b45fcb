#include "sense/nvml/nvml_sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "sense/nvml/nvml_test_support.h"
#include "wait_until.h"

namespace gpuenv {
namespace {

using testing::FakeNvidiaTest;
using testing::kFakeNvml;
using testing::scenario;

// The stand-in NVML answering from a scenario, initialised, and a
// sampler's memory over it: rounds a second apart from 10 s on.
class Sampling {
 public:
  explicit Sampling(const std::string& scenario_path) {
    testing::set_env("FAKE_NVML_SCENARIO", scenario_path);
    Problem err;
    EXPECT_TRUE(load_nvml(kFakeNvml, &nvml_, &err)) << err.message;
    ok_ = nvml_.fn.init.call != nullptr && nvml_.fn.init.call() == nvml::kSuccess;
    EXPECT_TRUE(ok_);
  }
  ~Sampling() {
    memory.gpm.clear();
    if (ok_) release_nvml_events(nvml_, &memory), nvml_.fn.shutdown.call();
  }
  Readings round() { return ok_ ? sample_nvml(nvml_, &memory, 10.0 + rounds_++) : Readings{}; }
  SamplerMemory memory;

 private:
  Nvml nvml_;
  bool ok_ = false;
  int rounds_ = 0;
};

class NvmlSamplerTest : public FakeNvidiaTest {
 protected:
  void TearDown() override {
    unsetenv("FAKE_NVML_PROCESSES");
    FakeNvidiaTest::TearDown();
  }

  // Rounds over the stand-in NVML answering from the scenario at path.
  std::vector<Readings> rounds(const std::string& path, int n) {
    Sampling s(path);
    std::vector<Readings> out;
    for (int i = 0; i < n; ++i) out.push_back(s.round());
    return out;
  }

  // Writes this test's process table (tests/fake_nvml/scenario.h) and names
  // it in FAKE_NVML_PROCESSES; written again, the next call reads the new one.
  void write_table(const std::string& text) {
    testing::set_env("FAKE_NVML_PROCESSES", write_scenario(text, "_table"));
  }
};

constexpr std::uint64_t kGiB = 1024ull * 1024 * 1024;

GpuProcess process(std::uint32_t pid, std::optional<std::uint64_t> bytes, std::optional<double> sm = std::nullopt) {
  return GpuProcess{pid, bytes, sm};
}

std::string describe(const std::optional<std::vector<GpuProcess>>& list) {
  if (!list) return "unknown";
  std::string out = "[";
  for (const GpuProcess& p : *list)
    out += " {" + std::to_string(p.pid) + ", " +
           (p.used_memory_bytes ? std::to_string(*p.used_memory_bytes) : "?") + ", " +
           (p.sm_ratio ? std::to_string(*p.sm_ratio) : "?") + "}";
  return out + " ]";
}

// The device's processes are listed and are exactly these, in this order.
#define EXPECT_PROCESSES(device, ...)                                                                    \
  EXPECT_EQ((device).processes, std::optional<std::vector<GpuProcess>>(std::vector<GpuProcess>{__VA_ARGS__})) \
      << describe((device).processes)
#define EXPECT_NO_PROCESS_LIST(device) EXPECT_EQ((device).processes, std::nullopt) << describe((device).processes)

TEST_F(NvmlSamplerTest, ReadsEveryValueTheScenarioGives) {
  Readings r = rounds(scenario("h200_8_busy"), 1)[0];
  ASSERT_EQ(r.devices.size(), 8u);
  const DeviceReading& g = r.devices[6];
  DeviceReading want;
  want.gpu = 6;
  want.uuid = "GPU-6c1f0c3e-8a52-4b0e-9d3a-2f1e7b9c4d16";
  want.name = "NVIDIA H200";
  want.pci_bus_id = "00000000:CB:00.0";
  want.up = true;
  want.utilization_ratio = 0.65;
  want.memory_utilization_ratio = 0.30;
  want.memory_total_bytes = 150754820096;
  want.memory_free_bytes = 150141403136 - 6ull * 10 * 1024 * 1024 * 1024;
  want.memory_used_bytes = *want.memory_total_bytes - 609222656 - *want.memory_free_bytes;  // _v2: less reserved
  want.health.temperature_c = 46;
  want.power_watts = 550.75;
  want.energy_joules = 7000.25;
  want.sm_clock_hz = 1890000000;
  want.memory_clock_hz = 3201000000;
  want.health.clock_events = 0;
  want.pcie_link_generation = 5;
  want.pcie_link_width = 16;
  want.pcie_replay_errors = 12;
  want.health.ecc_corrected = 18;
  want.health.ecc_uncorrected = 2;
  want.health.row_remap_correctable = 0;
  want.health.row_remap_uncorrectable = 1;
  want.health.row_remap_pending = true;
  want.nvlink_links_up = 18;
  want.minor_number = 6;
  want.memory_temperature_c = 56;
  want.health.row_remap_failure = false;
  want.xid_last = 0;  // watched, none raised
  want.xid_events = 0;
  want.nvlink_tx_bytes = 1000000ull * 1024;  // KiB over all links
  want.nvlink_rx_bytes = 2000000ull * 1024;  // no rate: the first round
  want.processes = std::vector<GpuProcess>{};  // listed: none
  want.encoder_utilization_ratio = 0.03;
  want.decoder_utilization_ratio = 0.20;
  want.memory_reserved_bytes = 609222656;
  for (unsigned link = 0; link < 18; ++link) want.nvlink_errors.push_back({link, 0, 0, 0, 0});
  EXPECT_EQ(g, want);
  EXPECT_EQ(r.driver_version, "580.95.05");
  EXPECT_EQ(r.devices[2].pcie_link_generation, 4);
  EXPECT_EQ(r.devices[2].pcie_link_width, 8);
  EXPECT_EQ(r.devices[5].health.clock_events, 0x60u);
  EXPECT_EQ(r.devices[7].nvlink_links_up, 16);
  EXPECT_EQ(r.nvml_errors_total, 0u);
  EXPECT_EQ(r.sampled_at, 10.0);
}

TEST_F(NvmlSamplerTest, NvlinkTrafficIsARateFromTheSecondRoundOnGpusWithNvlinkOnly) {
  std::vector<Readings> r = rounds(scenario("h200_8_busy"), 3);  // a second apart
  EXPECT_EQ(r[0].devices[6].nvlink_bytes_per_second, std::nullopt);
  for (int round = 1; round < 3; ++round) {
    EXPECT_EQ(r[round].devices[6].nvlink_bytes_per_second, 2.0 * 512000 * 1024) << round;  // both ways
    EXPECT_EQ(r[round].devices[0].nvlink_bytes_per_second, 0.0);  // idle links: 0, not absent
  }
  EXPECT_EQ(r[2].devices[6].nvlink_tx_bytes, (1000000ull + 2 * 512000) * 1024);
  EXPECT_EQ(r[2].devices[1].nvlink_tx_bytes, std::nullopt);  // NVML has no counters for it
  EXPECT_EQ(r[2].devices[1].nvlink_bytes_per_second, std::nullopt);
  std::vector<Readings> mig = rounds(scenario("a100_mig"), 2);
  for (const DeviceReading& m : mig[1].devices)
    EXPECT_EQ(m.nvlink_bytes_per_second, std::nullopt) << "no counters in the scenario, none on a MIG device";
}

TEST_F(NvmlSamplerTest, XidEventsAreTakenEachRoundWithoutWaiting) {
  std::vector<Readings> r = rounds(scenario("h200_8_busy"), 2);
  for (const Readings& round : r) {
    EXPECT_EQ(round.devices[4].xid_last, 79u);  // 13, then 79: the last one
    EXPECT_EQ(round.devices[4].xid_events, 2u);
    EXPECT_EQ(round.devices[3].xid_last, 0u);
    EXPECT_EQ(round.devices[3].xid_events, 0u);
  }
  std::string path = write_scenario(scenario_text("h200_8_busy") +
                                    "fault fn=nvmlDeviceRegisterEvents code=3 gpu=4\n");
  Readings unwatched = rounds(path, 1)[0];
  EXPECT_EQ(unwatched.devices[4].xid_last, std::nullopt);  // not supported: no series, not 0
  EXPECT_EQ(unwatched.devices[3].xid_last, 0u);
  EXPECT_EQ(unwatched.nvml_errors_total, 0u);
}

TEST_F(NvmlSamplerTest, ALostGpuIsDownUnderItsLabelsWhileTheOthersAreRead) {
  std::vector<Readings> r = rounds(scenario("gpu_lost"), 3);
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(r[round].devices.size(), 3u);
    const DeviceReading& lost = r[round].devices[1];
    EXPECT_FALSE(lost.up);
    EXPECT_EQ(lost.name, "NVIDIA L4");  // read before it fell off the bus
    EXPECT_EQ(lost.uuid, std::nullopt);  // the query that found it lost
    EXPECT_EQ(lost.memory_total_bytes, std::nullopt);
    EXPECT_TRUE(r[round].devices[0].up);
    EXPECT_TRUE(r[round].devices[2].up);
    EXPECT_EQ(r[round].devices[2].memory_total_bytes, 24152899584u);
    EXPECT_EQ(r[round].nvml_errors_total, static_cast<std::uint64_t>(round + 1));  // one a round
  }
}

TEST_F(NvmlSamplerTest, MigDevicesFollowTheirGpu) {
  Readings r = rounds(scenario("a100_mig"), 1)[0];
  ASSERT_EQ(r.devices.size(), 4u);
  EXPECT_EQ(r.devices[0].mig, std::nullopt);
  for (int slot = 0; slot < 3; ++slot) {
    const DeviceReading& m = r.devices[1 + slot];
    EXPECT_EQ(m.gpu, 0);
    EXPECT_EQ(m.mig, slot);
    EXPECT_TRUE(m.up);
    EXPECT_EQ(m.uuid, "MIG-5f2e0c1a-0d4b-5a8e-9c3f-00000000000" + std::to_string(3 + slot));
    EXPECT_EQ(m.name, "NVIDIA A100-SXM4-80GB MIG 2g.20gb");
    EXPECT_EQ(m.pci_bus_id, "00000000:07:00.0");  // its GPU's
    EXPECT_EQ(m.memory_total_bytes, 20937965568u);
    EXPECT_EQ(m.memory_free_bytes, 20916994048u);
    EXPECT_EQ(m.utilization_ratio, std::nullopt);  // NVML has none for a MIG device
    EXPECT_EQ(m.gpu_instance_id, 3 + slot);
    EXPECT_EQ(m.mig_profile, "2g.20gb");
    EXPECT_EQ(m.xid_last, std::nullopt);  // Xid is the GPU's
  }
}

TEST_F(NvmlSamplerTest, AFailingCallIsCountedAndItsValueUnknown) {
  std::string path = write_scenario(scenario_text("h200_8_busy") +
                                    "fault fn=nvmlDeviceGetPowerUsage code=999 gpu=3\n");
  Readings r = rounds(path, 2)[1];
  EXPECT_EQ(r.devices[3].power_watts, std::nullopt);
  EXPECT_TRUE(r.devices[3].up);
  EXPECT_EQ(r.devices[3].health.temperature_c, 43);
  EXPECT_EQ(r.nvml_errors_total, 2u);
}

// NVML GPM: figures between two rounds' samples, so none in the first round.
TEST_F(NvmlSamplerTest, GpmFiguresComeFromTheSecondRoundOn) {
  std::vector<Readings> r = rounds(scenario("h200_8_busy"), 3);
  EXPECT_EQ(r[0].devices[6].gpm_tensor_active, std::nullopt);
  for (int round = 1; round < 3; ++round) {
    const DeviceReading& g = r[round].devices[6];
    EXPECT_DOUBLE_EQ(g.gpm_gr_engine_active.value_or(-1), 0.985);
    EXPECT_DOUBLE_EQ(g.gpm_sm_active.value_or(-1), 0.91);
    EXPECT_DOUBLE_EQ(g.gpm_sm_occupancy.value_or(-1), 0.42);
    EXPECT_DOUBLE_EQ(g.gpm_tensor_active.value_or(-1), 0.94);
    EXPECT_DOUBLE_EQ(g.gpm_fp32_active.value_or(-1), 0.015);
    EXPECT_DOUBLE_EQ(g.gpm_fp16_active.value_or(-1), 0.0);
    EXPECT_DOUBLE_EQ(g.gpm_dram_active.value_or(-1), 0.61);
    EXPECT_EQ(r[round].devices[0].gpm_tensor_active, 0.0);  // a Hopper GPU without load: zero, not unknown
  }
  EXPECT_EQ(r[2].nvml_errors_total, 0u);
}

// Before Hopper GPM is unsupported: unknown, never zero, and asked only once.
TEST_F(NvmlSamplerTest, GpmIsUnknownBeforeHopperAndOnMigInstancesOfAnA100) {
  std::vector<Readings> r = rounds(scenario("a100_mig"), 3);
  for (const DeviceReading& d : r[2].devices) {
    EXPECT_EQ(d.gpm_sm_active, std::nullopt) << d.gpu << " " << d.mig.value_or(-1);
    EXPECT_EQ(d.gpm_tensor_active, std::nullopt);
    EXPECT_EQ(d.gpm_dram_active, std::nullopt);
  }
  std::vector<std::string> calls = nvml_trace();
  EXPECT_EQ(std::count(calls.begin(), calls.end(), "nvmlGpmQueryDeviceSupport"), 4);  // the GPU and 3 instances, once
  EXPECT_EQ(std::count(calls.begin(), calls.end(), "nvmlGpmSampleGet"), 0);
  EXPECT_EQ(std::count(calls.begin(), calls.end(), "nvmlGpmMigSampleGet"), 0);
  EXPECT_EQ(r[2].nvml_errors_total, 0u);
}

TEST_F(NvmlSamplerTest, GpmOfHopperMigInstancesThroughTheirParent) {
  std::vector<Readings> r = rounds(scenario("h100_mig"), 2);
  ASSERT_EQ(r[1].devices.size(), 3u);
  EXPECT_DOUBLE_EQ(r[1].devices[0].gpm_sm_active.value_or(-1), 0.70);
  EXPECT_DOUBLE_EQ(r[1].devices[1].gpm_tensor_active.value_or(-1), 0.92);
  EXPECT_DOUBLE_EQ(r[1].devices[2].gpm_tensor_active.value_or(-1), 0.0);
  EXPECT_DOUBLE_EQ(r[1].devices[2].gpm_fp32_active.value_or(-1), 0.55);
  EXPECT_EQ(r[1].nvml_errors_total, 0u);
}

TEST_F(NvmlSamplerTest, GpmIsUnknownWhereTheDriverLacksIt) {
  testing::set_env("FAKE_NVML_SCENARIO", scenario("h200"));
  Nvml nvml;
  Problem err;
  ASSERT_TRUE(load_nvml(testing::kOldNvml, &nvml, &err)) << err.message;
  ASSERT_EQ(nvml.fn.init.call(), nvml::kSuccess);
  SamplerMemory memory;
  sample_nvml(nvml, &memory, 1);
  Readings r = sample_nvml(nvml, &memory, 2);
  EXPECT_EQ(r.devices[0].gpm_sm_active, std::nullopt);
  EXPECT_EQ(r.nvml_errors_total, 0u);
  memory.gpm.clear();
  nvml.fn.shutdown.call();
}

// A failed sample is counted, its round has no figures, and the next two
// rounds start afresh.
TEST_F(NvmlSamplerTest, AFailedGpmSampleIsCountedAndStartsAfresh) {
  std::string path = write_scenario(scenario_text("h200") + "fault fn=nvmlGpmMetricsGet code=999\n");
  std::vector<Readings> r = rounds(path, 2);
  EXPECT_EQ(r[1].devices[0].gpm_sm_active, std::nullopt);
  EXPECT_EQ(r[1].nvml_errors_total, 1u);
}

// ---- The processes on each device (issue 38): what jobs are attributed by.

TEST_F(NvmlSamplerTest, ListsTheProcessesOfEachGpuAndMigDeviceWithMemoryAndSmUse) {
  Readings r = rounds(scenario("jobs_mixed"), 1)[0];  // its table: jobs_mixed.processes
  ASSERT_EQ(r.devices.size(), 5u);
  EXPECT_PROCESSES(r.devices[0], process(4101, 8 * kGiB, 0.35), process(4102, 4 * kGiB, 0.60));
  // 4201 is in both lists: once, with the larger memory; 4202 only in the graphics one.
  EXPECT_PROCESSES(r.devices[1], process(4201, 16 * kGiB, 0.90), process(4202, std::nullopt));
  EXPECT_PROCESSES(r.devices[2]);  // the MIG devices' parent: none of its own
  ASSERT_EQ(r.devices[3].mig, 0);
  EXPECT_PROCESSES(r.devices[3], process(4301, 2 * kGiB));  // no per-process SM use on a MIG device
  ASSERT_EQ(r.devices[4].mig, 1);
  EXPECT_PROCESSES(r.devices[4], process(4302, 3 * kGiB));
  EXPECT_EQ(r.nvml_errors_total, 0u);
  std::vector<std::string> calls = nvml_trace();
  // GPUs 0 and 1, twice each (the size, then the samples); never a GPU without processes or a MIG device.
  EXPECT_EQ(std::count(calls.begin(), calls.end(), "nvmlDeviceGetProcessUtilization"), 4);
}

TEST_F(NvmlSamplerTest, APidInBothListsIsOneProcessWithTheLargerMemory) {
  write_table(
      "gpu=0 pid=7 mem=1073741824 sm=20\n"
      "gpu=0 pid=7 mem=2147483648 type=graphics\n"
      "gpu=0 pid=8 mem=- \n"
      "gpu=0 pid=8 mem=536870912 type=graphics   # known in one list: known\n"
      "gpu=0 pid=9 mem=4294967296 type=graphics\n");
  Readings r = rounds(scenario("h200"), 1)[0];
  EXPECT_PROCESSES(r.devices[0], process(7, 2 * kGiB, 0.20), process(8, kGiB / 2), process(9, 4 * kGiB));
}

TEST_F(NvmlSamplerTest, MemoryNvmlCannotSayIsUnknownNotZero) {
  write_table("gpu=0 pid=31 mem=- sm=5\ngpu=0 pid=32 mem=0\n");
  Readings r = rounds(scenario("h200"), 1)[0];
  EXPECT_PROCESSES(r.devices[0], process(31, std::nullopt, 0.05), process(32, 0));
}

TEST_F(NvmlSamplerTest, EachRoundReadsTheProcessesAfresh) {
  write_table("gpu=0 pid=11 mem=1073741824 sm=20\n");  // the environment's table wins over the scenario's
  Sampling s(scenario("jobs_mixed"));
  Readings first = s.round();
  std::uint64_t seen = s.memory.gpus[0].process_samples_seen;
  EXPECT_GT(seen, 0u);
  write_table("# 11 ended, 12 started\ngpu=0 pid=12 mem=2147483648 sm=70\ngpu=1 pid=13 mem=1024\n");
  Readings second = s.round();
  EXPECT_PROCESSES(first.devices[0], process(11, kGiB, 0.20));
  EXPECT_PROCESSES(first.devices[1]);
  EXPECT_PROCESSES(second.devices[0], process(12, 2 * kGiB, 0.70));
  EXPECT_PROCESSES(second.devices[1], process(13, 1024));
  EXPECT_GT(s.memory.gpus[0].process_samples_seen, seen);  // the next round asks only for newer samples
  s.memory.gpus[0].process_samples_seen = UINT64_MAX;      // ... so with none newer, it gets none
  Readings third = s.round();
  EXPECT_PROCESSES(third.devices[0], process(12, 2 * kGiB));
  EXPECT_EQ(s.memory.gpus[0].process_samples_seen, UINT64_MAX);
}

TEST_F(NvmlSamplerTest, NoProcessTableMeansNoProcessesNotUnknown) {
  Readings r = rounds(scenario("a100_mig"), 1)[0];
  ASSERT_EQ(r.devices.size(), 4u);
  for (const DeviceReading& d : r.devices) EXPECT_PROCESSES(d) << d.mig.value_or(-1);
  EXPECT_EQ(r.nvml_errors_total, 0u);
}

TEST_F(NvmlSamplerTest, ALongListIsReadWhole) {
  std::string table;
  for (int pid = 1000; pid < 1200; ++pid) table += "gpu=0 pid=" + std::to_string(pid) + " mem=1048576\n";
  write_table(table);
  Readings r = rounds(scenario("h200"), 1)[0];
  ASSERT_TRUE(r.devices[0].processes.has_value());
  ASSERT_EQ(r.devices[0].processes->size(), 200u);
  EXPECT_EQ(r.devices[0].processes->back(), process(1199, 1048576));
  EXPECT_EQ(r.nvml_errors_total, 0u);  // asking the size is no failure
}

// Not supported: unknown, quietly; refused: unknown and counted, each round.
TEST_F(NvmlSamplerTest, AListNvmlCannotGiveIsUnknown) {
  write_table("gpu=0 pid=21 mem=1073741824 sm=10\n");
  std::string unsupported = write_scenario(
      scenario_text("a100_mig") + "fault fn=nvmlDeviceGetComputeRunningProcesses_v3 code=3 gpu=0\n", "_unsupported");
  Readings r = rounds(unsupported, 1)[0];
  for (const DeviceReading& d : r.devices) EXPECT_NO_PROCESS_LIST(d) << d.mig.value_or(-1);
  EXPECT_EQ(r.nvml_errors_total, 0u);
  std::string refused =
      write_scenario(scenario_text("h200") + "fault fn=nvmlDeviceGetComputeRunningProcesses_v3 code=4\n", "_refused");
  std::vector<Readings> two = rounds(refused, 2);
  EXPECT_NO_PROCESS_LIST(two[1].devices[0]);
  EXPECT_TRUE(two[1].devices[0].up);
  EXPECT_EQ(two[1].nvml_errors_total, 2u);
  std::string no_graphics = write_scenario(
      scenario_text("h200") + "fault fn=nvmlDeviceGetGraphicsRunningProcesses_v3 code=3\n", "_no_graphics");
  Readings compute_only = rounds(no_graphics, 1)[0];
  EXPECT_PROCESSES(compute_only.devices[0], process(21, kGiB, 0.10));  // the compute list alone
  EXPECT_EQ(compute_only.nvml_errors_total, 0u);
}

TEST_F(NvmlSamplerTest, SmUseIsUnknownWithoutASample) {
  write_table("gpu=0 pid=41 mem=1073741824\n");  // no sm=: NOT_FOUND, no samples
  Readings none = rounds(scenario("h200"), 1)[0];
  EXPECT_PROCESSES(none.devices[0], process(41, kGiB));
  EXPECT_EQ(none.nvml_errors_total, 0u);
  write_table("gpu=0 pid=41 mem=1073741824 sm=50\n");
  std::string unsupported =
      write_scenario(scenario_text("h200") + "fault fn=nvmlDeviceGetProcessUtilization code=3\n");
  Readings r = rounds(unsupported, 1)[0];
  EXPECT_PROCESSES(r.devices[0], process(41, kGiB));
  EXPECT_EQ(r.nvml_errors_total, 0u);
  std::string failing =
      write_scenario(scenario_text("h200") + "fault fn=nvmlDeviceGetProcessUtilization code=999\n", "_failing");
  Readings f = rounds(failing, 1)[0];
  EXPECT_PROCESSES(f.devices[0], process(41, kGiB));
  EXPECT_EQ(f.nvml_errors_total, 1u);
}

TEST_F(NvmlSamplerTest, EnergyGrowsWhereTheScenarioSaysSo) {
  std::vector<Readings> r = rounds(scenario("jobs_mixed"), 3);  // GPU 0: energy=1000000/250000 (mJ)
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(r[round].devices[0].energy_joules, 1000.0 + 250.0 * round) << round;
    EXPECT_EQ(r[round].devices[1].energy_joules, 2000.0) << round;  // plain energy=N stays
  }
}

TEST_F(NvmlSamplerTest, TheThreadKeepsTheNewestRound) {
  testing::set_env("FAKE_NVML_SCENARIO", scenario("h200_8_busy"));
  NvmlSampler s;
  Problem err;
  ASSERT_TRUE(s.start(kFakeNvml, std::chrono::milliseconds(20), &err)) << err.message;
  double first = s.latest()->sampled_at;
  EXPECT_EQ(s.latest()->devices.size(), 8u);
  EXPECT_TRUE(testing::wait_until([&] { return s.latest()->sampled_at > first; }));
  s.stop();
  EXPECT_EQ(s.latest()->devices.size(), 8u);  // the last round stays readable
}

TEST_F(NvmlSamplerTest, StartSaysWhyNvmlCannotServe) {
  NvmlSampler s;
  Problem err;
  EXPECT_FALSE(s.start(testing::kNoNvml, std::chrono::milliseconds(20), &err));
  EXPECT_EQ(err.code, "nvml_library_not_found");
  testing::set_env("FAKE_NVML_SCENARIO", scenario("init_driver_not_loaded"));
  NvmlSampler t;
  EXPECT_FALSE(t.start(kFakeNvml, std::chrono::milliseconds(20), &err));
  EXPECT_NE(err.message.find("nvmlInit_v2"), std::string::npos) << err.message;
}

// ---- dcgm-exporter's last default counters and the NVLink error counters.

TEST_F(NvmlSamplerTest, PcieTrafficIsGpmsOnHopperFromTheSecondRound) {
  std::vector<Readings> r = rounds(scenario("h200_8_busy"), 2);
  EXPECT_EQ(r[0].devices[6].pcie_tx_bytes_per_second, std::nullopt);  // GPM needs two samples
  EXPECT_DOUBLE_EQ(r[1].devices[6].pcie_tx_bytes_per_second.value_or(-1), 2048.5 * 1048576);
  EXPECT_DOUBLE_EQ(r[1].devices[6].pcie_rx_bytes_per_second.value_or(-1), 512.0 * 1048576);
  EXPECT_EQ(r[1].devices[0].pcie_tx_bytes_per_second, 0.0);  // idle, not unknown
  std::vector<std::string> calls = nvml_trace();
  EXPECT_EQ(std::count(calls.begin(), calls.end(), "nvmlDeviceGetPcieThroughput"), 0) << "GPM answers on Hopper";
  EXPECT_EQ(r[1].nvml_errors_total, 0u);
}

TEST_F(NvmlSamplerTest, PcieTrafficIsNvmlsThroughputBeforeHopper) {
  std::vector<Readings> r = rounds(scenario("a100_nvlink_8"), 2);
  for (const Readings& round : r) {
    EXPECT_DOUBLE_EQ(round.devices[6].pcie_tx_bytes_per_second.value_or(-1), 1000.0 * 1024);
    EXPECT_DOUBLE_EQ(round.devices[6].pcie_rx_bytes_per_second.value_or(-1), 2000.0 * 1024);
    EXPECT_EQ(round.devices[5].pcie_tx_bytes_per_second, std::nullopt) << "not supported: no series";
  }
  EXPECT_EQ(r[1].nvml_errors_total, 0u);
}

TEST_F(NvmlSamplerTest, EncoderDecoderAndReservedMemoryAreAbsentWhereNotSupported) {
  Readings r = rounds(scenario("a100_nvlink_8"), 1)[0];
  EXPECT_EQ(r.devices[0].encoder_utilization_ratio, std::nullopt);
  EXPECT_EQ(r.devices[0].decoder_utilization_ratio, std::nullopt);
  EXPECT_EQ(r.devices[0].memory_reserved_bytes, 540016640u);
  EXPECT_TRUE(r.devices[0].nvlink_errors.empty()) << "the scenario gives no error counters";
}

TEST_F(NvmlSamplerTest, NvlinkErrorsAreReadOnActiveLinksEachRound) {
  std::vector<Readings> r = rounds(scenario("a100_nvlink_8"), 3);
  const std::vector<NvlinkErrors>& first = r[0].devices[6].nvlink_errors;
  ASSERT_EQ(first.size(), 12u);
  EXPECT_EQ(first[0], (NvlinkErrors{0, 3, 0, 1, 0}));  // crc_flit, crc_data, replay, recovery
  for (int round = 0; round < 3; ++round)
    EXPECT_EQ(r[round].devices[6].nvlink_errors[2].crc_flit, 3u + 1000u * round) << "link 2 grows";
  std::vector<std::string> calls = nvml_trace();
  // 4 counters of the 12 active links of GPU 6, each round; the other GPUs' answer NOT_SUPPORTED.
  EXPECT_GE(std::count(calls.begin(), calls.end(), "nvmlDeviceGetNvLinkErrorCounter"), 3 * 12 * 4);
  EXPECT_EQ(r[2].nvml_errors_total, 0u);
}

TEST_F(NvmlSamplerTest, ALinkThatIsDownHasNoErrorCounters) {
  std::string text = scenario_text("a100_nvlink_8");
  std::string seventh = "nvlinks=10/12 cpus=32-63,96-127 numa=1 mig=0 migmax=7";
  ASSERT_NE(text.find(seventh), std::string::npos);
  text.replace(text.find(seventh), seventh.size(), seventh + " nvlink_err=0/0/0/0");
  Readings r = rounds(write_scenario(text), 1)[0];
  std::vector<unsigned> links;
  for (const NvlinkErrors& e : r.devices[7].nvlink_errors) links.push_back(e.link);
  EXPECT_EQ(links, (std::vector<unsigned>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

}  // namespace
}  // namespace gpuenv
