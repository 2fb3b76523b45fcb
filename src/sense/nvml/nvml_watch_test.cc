// `gpuenv check --long`'s watcher against the stand-in libnvidia-ml: the
// extremes and counters it keeps come from the one live-state reading, and
// a GPU NVML does not list is the error table's problem.
#include "sense/nvml/nvml_watch.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "sense/nvml/nvml_test_support.h"
#include "wait_until.h"

namespace gpuenv {
namespace {

using testing::FakeNvidiaTest;
using testing::kFakeNvml;

constexpr const char* kH200 = "GPU-6c1f0c3e-8a52-4b0e-9d3a-2f1e7b9c4d10";

class NvmlWatchTest : public FakeNvidiaTest {
 protected:
  // h200_health's GPU, loaded: clocks, power, reasons and counters set.
  std::string busy_scenario() {
    std::string s = scenario_text("h200_health");
    for (auto [from, to] : std::initializer_list<std::pair<std::string, std::string>>{
             {"events=0x1", "events=0x44"},
             {"temp=34", "temp=61"},
             {"ecc_uncorrected=0", "ecc_uncorrected=3 ecc_corrected=7"},
             {"remap=0/0", "remap=1/0"},
             {"fabric_status=0", "fabric_status=0 clocks=1500/2600 power_draw=412999"}}) {
      std::size_t at = s.find(from);
      EXPECT_NE(at, std::string::npos) << from;
      if (at != std::string::npos) s.replace(at, from.size(), to);
    }
    return write_scenario(s);
  }
  // How many times the watcher has read the GPU so far (one temperature
  // query a reading), from the stand-in's trace.
  int readings() const {
    std::vector<std::string> t = nvml_trace();
    return static_cast<int>(std::count(t.begin(), t.end(), "nvmlDeviceGetTemperature"));
  }
};

TEST_F(NvmlWatchTest, KeepsTheExtremesAndTheCountersOfTheReadings) {
  testing::set_env("FAKE_NVML_SCENARIO", busy_scenario());
  NvmlWatch w;
  Problem err;
  ASSERT_TRUE(w.start(kFakeNvml, {kH200}, std::chrono::milliseconds(5), &err)) << err.message;
  EXPECT_TRUE(testing::wait_until([&] { return readings() >= 3; })) << "the first reading and two rounds";
  std::vector<WatchedGpu> seen = w.stop();
  ASSERT_EQ(seen.size(), 1u);
  const WatchedGpu& g = seen[0];
  EXPECT_EQ(g.uuid, kH200);
  EXPECT_GE(g.samples, 4);  // the first reading, two rounds and the last
  EXPECT_EQ(g.sm_mhz_min, 1500u);
  EXPECT_EQ(g.sm_mhz_max, 1500u);
  EXPECT_EQ(g.memory_mhz_min, 2600u);
  EXPECT_EQ(g.temperature_max_c, 61u);
  EXPECT_EQ(g.power_max_w, 412u);  // whole watts, rounded down
  EXPECT_EQ(g.clock_events, 0x44u);
  EXPECT_EQ(g.ecc_uncorrected_before, 3u);
  EXPECT_EQ(g.ecc_uncorrected_after, 3u);
  EXPECT_EQ(g.ecc_corrected_before, 7u);
  EXPECT_EQ(g.ecc_corrected_after, 7u);
  EXPECT_EQ(g.remapping_pending, true);
  EXPECT_EQ(g.remapping_failed, false);
  EXPECT_TRUE(w.stop().empty());  // stopped once
}

TEST_F(NvmlWatchTest, AGpuNvmlDoesNotListIsTheErrorTablesProblem) {
  testing::set_env("FAKE_NVML_SCENARIO", testing::scenario("h200"));
  NvmlWatch w;
  Problem err;
  EXPECT_FALSE(w.start(kFakeNvml, {kH200, "GPU-00000000-0000-0000-0000-000000000000"},
                       std::chrono::milliseconds(5), &err));
  EXPECT_EQ(err.code, "nvml_gpu_not_found");
  EXPECT_NE(err.message.find("GPU-00000000-0000-0000-0000-000000000000"), std::string::npos) << err.message;
  EXPECT_TRUE(w.stop().empty());
  NvmlWatch none;
  EXPECT_FALSE(none.start(testing::kNoNvml, {kH200}, std::chrono::milliseconds(5), &err));
  EXPECT_EQ(err.code, "nvml_library_not_found");
}

}  // namespace
}  // namespace gpuenv
