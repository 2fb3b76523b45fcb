#include "sense/nvml/nvml_sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "sense/nvml/nvml_test_support.h"
#include "wait_until.h"

namespace gpuenv {
namespace {

using testing::FakeNvidiaTest;
using testing::kFakeNvml;
using testing::scenario;

class NvmlSamplerTest : public FakeNvidiaTest {
 protected:
  // Rounds over the stand-in NVML answering as `name`.
  std::vector<Readings> rounds(const std::string& path, int n) {
    testing::set_env("FAKE_NVML_SCENARIO", path);
    Nvml nvml;
    Problem err;
    EXPECT_TRUE(load_nvml(kFakeNvml, &nvml, &err)) << err.message;
    EXPECT_EQ(nvml.fn.init.call(), nvml::kSuccess);
    SamplerMemory memory;
    std::vector<Readings> out;
    for (int i = 0; i < n; ++i) out.push_back(sample_nvml(nvml, &memory, 10.0 + i));
    memory.gpm.clear();
    release_nvml_events(nvml, &memory);
    nvml.fn.shutdown.call();
    return out;
  }
};

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
  want.temperature_c = 46;
  want.power_watts = 550.75;
  want.energy_joules = 7000.25;
  want.sm_clock_hz = 1890000000;
  want.memory_clock_hz = 3201000000;
  want.clock_events = 0;
  want.pcie_link_generation = 5;
  want.pcie_link_width = 16;
  want.pcie_replay_errors = 12;
  want.ecc_corrected = 18;
  want.ecc_uncorrected = 2;
  want.row_remap_correctable = 0;
  want.row_remap_uncorrectable = 1;
  want.row_remap_pending = true;
  want.nvlink_links_up = 18;
  want.minor_number = 6;
  want.memory_temperature_c = 56;
  want.row_remap_failure = false;
  want.xid_last = 0;  // watched, none raised
  want.xid_events = 0;
  want.nvlink_tx_bytes = 1000000ull * 1024;  // KiB over all links
  want.nvlink_rx_bytes = 2000000ull * 1024;  // no rate: the first round
  EXPECT_EQ(g, want);
  EXPECT_EQ(r.driver_version, "580.95.05");
  EXPECT_EQ(r.devices[2].pcie_link_generation, 4);
  EXPECT_EQ(r.devices[2].pcie_link_width, 8);
  EXPECT_EQ(r.devices[5].clock_events, 0x60u);
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
  EXPECT_EQ(r.devices[3].temperature_c, 43);
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

}  // namespace
}  // namespace gpuenv
