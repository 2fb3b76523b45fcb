#include "bench/check.h"

#include <gtest/gtest.h>

#include "builders.h"
#include "model/hardware/clock_events.h"

namespace gpuenv::bench {
namespace {

using namespace gpuenv::testing;

struct Expected {
  std::string name;
  CheckOutcome verdict;
  std::string contains;
};

void expect_items(const std::vector<CheckItem>& got, const std::vector<Expected>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].name, want[i].name) << i;
    EXPECT_EQ(got[i].verdict, want[i].verdict) << got[i].name << ": " << got[i].message;
    EXPECT_NE(got[i].message.find(want[i].contains), std::string::npos) << got[i].message;
  }
}

TEST(CheckVerdict, MachineAndPlan) {
  Plan plan;
  plan.notes = {{Severity::kInfo, "nccl", "fine"},
                {Severity::kWarning, "measured", "GPU 0 slow"},
                {Severity::kError, "mig", "bad"}};
  expect_items(machine_items(machine::h200(), plan),
               {{"plan measured", CheckOutcome::kWarn, "GPU 0 slow"}, {"plan mig", CheckOutcome::kFail, "bad"}});
  Machine lost = machine::h100(2);
  lost.gpus[1].problem = Problem{"nvml", "gpu_lost", "GPU 1 fell off the bus", "reset it"};
  expect_items(machine_items(lost, {}), {{"GPU 1", CheckOutcome::kFail, "GPU 1 fell off the bus; reset it"}});
  expect_items(machine_items(machine::none(), {}), {{"nvidia", CheckOutcome::kFail, "libnvidia-ml.so.1"}});
  Machine quiet = machine::none();
  quiet.nvidia.problems.clear();
  expect_items(machine_items(quiet, {}), {{"nvidia", CheckOutcome::kFail, "no NVIDIA GPU was found"}});
  EXPECT_TRUE(machine_items(machine::h200(), {}).empty());  // nothing to judge: no problem, finding or warning
}

// A check that checked nothing (check --machine on a healthy snapshot: the
// GPU tests measure this machine only) does not pass.
TEST(CheckVerdict, NothingCheckedDoesNotPass) {
  EXPECT_FALSE(passed({}));
  EXPECT_TRUE(passed({{"plan mig", CheckOutcome::kWarn, "hm"}}));
}

// What doctor calls broken fails the check: decide/health.h judges both.
TEST(CheckVerdict, SickGpusFail) {
  Machine sick = machine::h100(3);
  sick.gpus[0].health.ecc_uncorrected = 2;
  sick.gpus[1].health.row_remap_pending = true;
  sick.gpus[2].fabric_state = "not_started";
  expect_items(machine_items(sick, {}), {{"GPU 0 memory", CheckOutcome::kFail, "2 uncorrectable ECC error(s)"},
                                         {"GPU 1 memory", CheckOutcome::kWarn, "remapping pending"},
                                         {"GPU 2 fabric", CheckOutcome::kFail, "nvidia-fabricmanager"}});
  EXPECT_FALSE(passed(machine_items(sick, {})));
  sick.gpus[0].health.ecc_uncorrected = 0, sick.gpus[2].fabric_state = "completed";
  EXPECT_TRUE(passed(machine_items(sick, {})));
}

Result result(const std::string& key, BenchStatus s, std::optional<double> value = std::nullopt) {
  Result r;
  r.key = key, r.status = s, r.value = value, r.message = "why", r.detail = "how", r.metric = FigureKind::kTflops;
  r.target.devices = {{0, "NVIDIA H200", "GPU-x", {9, 0}, 132, 1}};
  return r;
}

TEST(CheckVerdict, Results) {
  expect_items(result_items({result("check_gemm", BenchStatus::kOk, 500), result("check_copy", BenchStatus::kSkipped),
                             result("sustained_gemm", BenchStatus::kWrong), result("memtest", BenchStatus::kError)}),
               {{"GPU 0 check_gemm", CheckOutcome::kPass, "500 TFLOP/s, how"},
                {"GPU 0 check_copy", CheckOutcome::kWarn, "skipped: why"},
                {"GPU 0 sustained_gemm", CheckOutcome::kFail, "wrong result: why"},
                {"GPU 0 memtest", CheckOutcome::kFail, "failed: why"}});
}

WatchedGpu watched(unsigned long long events, unsigned long long ecc_before, unsigned long long ecc_after) {
  WatchedGpu g;
  g.uuid = "GPU-x", g.samples = 10, g.sm_mhz_min = 1755, g.sm_mhz_max = 1980, g.temperature_max_c = 71;
  g.power_max_w = 690, g.clock_events = events;
  g.ecc_uncorrected_before = ecc_before, g.ecc_uncorrected_after = ecc_after;
  g.ecc_corrected_before = 0, g.ecc_corrected_after = 3;
  g.remapping_pending = false, g.remapping_failed = false;
  return g;
}

TEST(CheckVerdict, WatchedClocksAndEcc) {
  struct Row {
    const char* description;
    WatchedGpu g;
    CheckOutcome clocks, ecc;
    std::string clocks_says, ecc_says;
  } rows[] = {
      {"power cap under a GEMM is normal", watched(clock_event::kSwPowerCap, 0, 0), CheckOutcome::kPass, CheckOutcome::kPass,
       "SM clock 1755-1980 MHz; up to 71 C; up to 690 W; clocks held back by: sw_power_cap",
       "0 new uncorrectable ECC errors, 3 corrected"},
      {"hardware slowdown fails", watched(clock_event::kHwSlowdown | clock_event::kSwPowerCap, 0, 0),
       CheckOutcome::kFail, CheckOutcome::kPass, "sw_power_cap, hw_slowdown; it is slowed by hardware slowdown", ""},
      {"power brake fails", watched(clock_event::kHwPowerBrakeSlowdown, 0, 0), CheckOutcome::kFail, CheckOutcome::kPass,
       "hw_power_brake_slowdown", ""},
      {"software thermal slowdown warns", watched(clock_event::kSwThermalSlowdown, 0, 0), CheckOutcome::kWarn,
       CheckOutcome::kPass, "it is slowed by thermal slowdown", ""},
      {"new uncorrectable ECC errors fail", watched(0, 2, 5), CheckOutcome::kPass, CheckOutcome::kFail, "",
       "3 new uncorrectable ECC errors"},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.description);
    auto items = watch_items({r.g});
    ASSERT_EQ(items.size(), 2u);
    EXPECT_EQ(items[0].verdict, r.clocks) << items[0].message;
    EXPECT_EQ(items[1].verdict, r.ecc) << items[1].message;
    EXPECT_NE(items[0].message.find(r.clocks_says), std::string::npos) << items[0].message;
    EXPECT_NE(items[1].message.find(r.ecc_says), std::string::npos) << items[1].message;
  }
  WatchedGpu unknown;
  unknown.uuid = "GPU-y";
  auto items = watch_items({unknown});
  EXPECT_TRUE(passed(items));
  EXPECT_EQ(items[1].message, "ECC counters not available");
  WatchedGpu remap = watched(0, 0, 0);
  remap.remapping_failed = true;
  EXPECT_EQ(watch_items({remap})[1].verdict, CheckOutcome::kFail);
  remap.remapping_failed = false, remap.remapping_pending = true;
  EXPECT_EQ(watch_items({remap})[1].verdict, CheckOutcome::kWarn);
}

}  // namespace
}  // namespace gpuenv::bench
