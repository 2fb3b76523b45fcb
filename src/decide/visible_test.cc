#include "decide/visible.h"

#include <gtest/gtest.h>

#include <ctime>

#include "builders.h"

namespace gpuenv {
namespace {

using namespace testing;

struct VisibleRow {
  std::string description;
  std::optional<std::string> cvd;     // nullopt: unset
  std::vector<std::string> expected;  // "1" for GPU 1, "0/2" for MIG device 2 of GPU 0
  std::string problem;  // the whole problem text after "CUDA_VISIBLE_DEVICES=<value>: "; "" for none
};

std::vector<std::string> labels(const Visibility& v) {
  std::vector<std::string> out;
  for (const auto& d : v.devices)
    out.push_back(std::to_string(d.gpu->index) + (d.mig ? "/" + std::to_string(d.mig->index) : ""));
  return out;
}

void run(const Machine& m, const std::vector<VisibleRow>& rows) {
  for (const auto& row : rows) {
    SCOPED_TRACE(row.description + " (CUDA_VISIBLE_DEVICES=" + row.cvd.value_or("<unset>") + ")");
    Visibility v = visible_devices(m, row.cvd ? &*row.cvd : nullptr);
    EXPECT_EQ(labels(v), row.expected);
    EXPECT_EQ(v.restricted, row.cvd.has_value());
    if (row.problem.empty())
      EXPECT_EQ(v.problem, std::nullopt);
    else
      EXPECT_EQ(v.problem, "CUDA_VISIBLE_DEVICES=" + *row.cvd + ": " + row.problem);
  }
}

const std::string kEnds = "; CUDA ignores this entry and every one after it";

TEST(Visible, OrdinalsAndGpuUuids) {
  Machine m = machine::h100(2);
  std::string u1 = *m.gpus[1].uuid;
  std::string common = u1.substr(0, 12);  // "GPU-1a2bXXXX", shared by both
  ASSERT_EQ(m.gpus[0].uuid->substr(0, 12), common);
  run(m,
      {
          {"unset: every GPU", std::nullopt, {"0", "1"}, ""},
          {"empty: none", "", {}, ""},
          {"blank: none", "  ", {}, ""},
          {"-1: none, on purpose", "-1", {}, ""},
          {"NoDevFiles (Slurm): none, on purpose", "NoDevFiles", {}, ""},
          {"both", "0,1", {"0", "1"}, ""},
          {"reordered", "1,0", {"1", "0"}, ""},
          {"spaces around entries", " 1 , 0 ", {"1", "0"}, ""},
          {"out of range: CUDA keeps what came before",
           "0,7",
           {"0"},
           "device index 7 does not exist (2 device(s) present)" + kEnds},
          {"-1 ends the list quietly", "0,-1,1", {"0"}, ""},
          {"another negative ends it loudly", "1,-2", {"1"}, "the negative index -2 ends the list" + kEnds},
          {"garbage", "abc", {}, "\"abc\" is neither a device index nor a GPU-/MIG- UUID" + kEnds},
          {"garbage in the middle",
           "0,abc,1",
           {"0"},
           "\"abc\" is neither a device index nor a GPU-/MIG- UUID" + kEnds},
          {"an empty entry", "0,,1", {"0"}, "\"\" is neither a device index nor a GPU-/MIG- UUID" + kEnds},
          {"digits then junk read as the digits", "1gpu", {"1"}, "\"1gpu\" is read as index 1"},
          {"a plus sign", "+1,0", {"1", "0"}, "\"+1\" is read as index 1"},
          {"a repeat hides everything",
           "0,1,0",
           {},
           "device 0 is listed twice, which makes CUDA hide every device"},
          {"a repeat by UUID",
           "1," + u1,
           {},
           "device " + u1 + " is listed twice, which makes CUDA hide every device"},
          {"full UUID", u1, {"1"}, ""},
          {"unique UUID prefix", u1.substr(0, 17), {"1"}, ""},
          {"ambiguous UUID prefix",
           common,
           {},
           "the UUID prefix " + common + " matches 2 devices; give more of it" + kEnds},
          {"unknown UUID", "GPU-ffff", {}, "no device has the UUID GPU-ffff" + kEnds},
          {"a MIG UUID on a box without MIG", "MIG-ffff", {}, "no device has the UUID MIG-ffff" + kEnds},
      });
}

TEST(Visible, MigDevices) {
  Machine m = machine::a100_mig();
  const Gpu& g = m.gpus[0];
  std::string u1 = g.mig_devices[1].uuid;
  run(m, {
             {"unset: every MIG device", std::nullopt, {"0/0", "0/1", "0/2"}, ""},
             {"a MIG UUID", u1, {"0/1"}, ""},
             {"MIG UUIDs in order given", g.mig_devices[2].uuid + "," + u1, {"0/2", "0/1"}, ""},
             {"CUDA 11 form MIG-GPU-uuid/gi/ci", "MIG-" + *g.uuid + "/2/0", {"0/1"}, ""},
             {"CUDA 11 form, no such instance",
              "MIG-" + *g.uuid + "/9/0",
              {},
              "no MIG device matches MIG-" + *g.uuid + "/9/0" + kEnds},
             {"ordinals count MIG devices", "2", {"0/2"}, ""},
         });
}

TEST(Visible, LostGpuIsNotEnumerated) {
  Machine m = machine::h100(3);
  m.gpus[1].problem = Problem{"nvml", "gpu_lost", "nvmlDeviceGetHandleByIndex(1): GPU is lost", "reboot"};
  std::string lost = *m.gpus[1].uuid;
  run(m, {
             {"unset: the others", std::nullopt, {"0", "2"}, ""},
             {"ordinals skip it", "1", {"2"}, ""},
             {"so the last index is gone",
              "2",
              {},
              "device index 2 does not exist (2 device(s) present)" + kEnds},
             {"its UUID finds nothing", lost, {}, "no device has the UUID " + lost + kEnds},
         });
}

TEST(Visible, VisibleGpusDeduplicatesMigDevices) {
  Machine m = machine::a100_mig();
  Visibility v = visible_devices(m, nullptr);
  ASSERT_EQ(v.devices.size(), 3u);
  EXPECT_EQ(visible_gpus(v), std::vector<const Gpu*>{&m.gpus[0]});
}

// Issue 12: a search of the list per device made visible_gpus quadratic
// (6 s for 100,000 GPUs, 37 s for 300,000). Its CPU time here is bounded
// far below what the quadratic search takes for 150,000 even in a release
// build (several seconds), and far above the linear one's (milliseconds).
TEST(Visible, VisibleGpusIsLinear) {
  std::vector<Gpu> gpus(150000);
  Visibility v;
  for (const Gpu& g : gpus) v.devices.push_back({&g, nullptr});
  v.devices.push_back({&gpus[7], nullptr});  // repeated: kept once, where first seen
  std::clock_t start = std::clock();
  std::vector<const Gpu*> got = visible_gpus(v);
  double seconds = double(std::clock() - start) / CLOCKS_PER_SEC;
  ASSERT_EQ(got.size(), gpus.size());
  EXPECT_EQ(got[7], &gpus[7]);
  EXPECT_EQ(got.back(), &gpus.back());
  EXPECT_LT(seconds, 1.0);
}

}  // namespace
}  // namespace gpuenv
