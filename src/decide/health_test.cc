#include "decide/health.h"

#include <gtest/gtest.h>

#include <functional>

#include "builders.h"

namespace gpuenv {
namespace {

using namespace gpuenv::testing;

struct Want {
  int gpu;
  std::string topic;
  Severity severity;
  std::string contains;
};

Machine with(Machine m, const std::function<void(Machine&)>& edit) {
  edit(m);
  return m;
}

TEST(Health, OneFindingPerFault) {
  struct Row {
    const char* description;
    Machine machine;
    std::vector<Want> want;  // exactly these, in order
  } rows[] = {
      {"healthy, health not read", machine::h100(2), {}},
      {"healthy, health read",
       with(machine::h100(2),
            [](Machine& m) {
              for (auto& g : m.gpus) {
                g.health.ecc_uncorrected = 0, g.health.row_remap_pending = false, g.health.row_remap_failure = false;
                g.health.clock_events = 0x1 | 0x4;  // idle, power cap: normal
                g.fabric_state = "completed", g.fabric_status = 0;
              }
            }),
       {}},
      {"uncorrectable ECC errors",
       with(machine::h100(2), [](Machine& m) { m.gpus[1].health.ecc_uncorrected = 2; }),
       {{1, "memory", Severity::kError, "had 2 uncorrectable ECC error(s)"}}},
      {"row remapping failed beats pending",
       with(machine::h100(1),
            [](Machine& m) { m.gpus[0].health.row_remap_failure = true, m.gpus[0].health.row_remap_pending = true; }),
       {{0, "memory", Severity::kError, "no spare rows"}}},
      {"row remapping pending",
       with(machine::h100(1), [](Machine& m) { m.gpus[0].health.row_remap_pending = true; }),
       {{0, "memory", Severity::kWarning, "nvidia-smi -r -i 0"}}},
      {"retired pages pending", with(machine::v100(), [](Machine& m) { m.gpus[0].retired_pages_pending = true; }),
       {{0, "memory", Severity::kWarning, "retired memory pages"}}},
      {"hardware thermal slowdown is an error",
       with(machine::h200(1), [](Machine& m) { m.gpus[0].health.clock_events = 0x20 | 0x40, m.gpus[0].health.temperature_c = 91; }),
       {{0, "clocks", Severity::kError, "thermal slowdown at 91 C"}}},
      {"power brake is an error",
       with(machine::h200(1), [](Machine& m) { m.gpus[0].health.clock_events = 0x80; }),
       {{0, "clocks", Severity::kError, "power brake"}}},
      {"software thermal slowdown warns",
       with(machine::h200(1), [](Machine& m) { m.gpus[0].health.clock_events = 0x20; }),
       {{0, "clocks", Severity::kWarning, "thermal slowdown"}}},
      {"fabric not started, and failed",
       with(machine::h100(2),
            [](Machine& m) {
              m.gpus[0].fabric_state = "not_started";
              m.gpus[1].fabric_state = "completed", m.gpus[1].fabric_status = 999;
            }),
       {{0, "fabric", Severity::kError, "(not_started)"}, {1, "fabric", Severity::kError, "status 999"}}},
      {"PCIe GPU: fabric not supported", with(machine::l4(), [](Machine& m) { m.gpus[0].fabric_state = "not_supported"; }),
       {}},
      {"two faults on one GPU, in order",
       with(machine::h100(1),
            [](Machine& m) { m.gpus[0].health.ecc_uncorrected = 1, m.gpus[0].fabric_state = "in_progress"; }),
       {{0, "memory", Severity::kError, "ECC"}, {0, "fabric", Severity::kError, "in_progress"}}},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.description);
    auto got = gpu_health(r.machine);
    ASSERT_EQ(got.size(), r.want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].gpu, r.want[i].gpu);
      EXPECT_EQ(got[i].topic, r.want[i].topic);
      EXPECT_EQ(got[i].severity, r.want[i].severity) << got[i].seen;
      EXPECT_NE((got[i].seen + " | " + got[i].fix).find(r.want[i].contains), std::string::npos) << got[i].seen;
      EXPECT_FALSE(got[i].fix.empty());
    }
  }
}


// The verdicts over a bare GpuHealth, with no Gpu around it: what `check
// --long` judges from a watched GPU (the ECC errors that appeared while it
// ran, the remapping state, the clock events seen), under the index given.
TEST(Health, JudgesABareGpuHealth) {
  GpuHealth h;
  EXPECT_EQ(uncorrected_ecc(3, h), std::nullopt);
  EXPECT_EQ(row_remapping(3, h), std::nullopt);
  EXPECT_EQ(clock_slowdown(3, h), std::nullopt);

  h.ecc_uncorrected = 0, h.row_remap_pending = false, h.row_remap_failure = false, h.clock_events = 0x1 | 0x4;
  EXPECT_EQ(uncorrected_ecc(3, h), std::nullopt);
  EXPECT_EQ(row_remapping(3, h), std::nullopt);
  EXPECT_EQ(clock_slowdown(3, h), std::nullopt);

  h.ecc_uncorrected = 7;  // after - before, as watched
  auto ecc = uncorrected_ecc(3, h);
  ASSERT_TRUE(ecc);
  EXPECT_EQ(ecc->gpu, 3);
  EXPECT_EQ(ecc->topic, "memory");
  EXPECT_EQ(ecc->severity, Severity::kError);
  EXPECT_NE(ecc->seen.find("had 7 uncorrectable ECC error(s)"), std::string::npos) << ecc->seen;
  EXPECT_NE(ecc->fix.find("nvidia-smi -r -i 3"), std::string::npos) << ecc->fix;

  h.row_remap_pending = true;
  auto pending = row_remapping(3, h);
  ASSERT_TRUE(pending);
  EXPECT_EQ(pending->severity, Severity::kWarning);
  EXPECT_NE(pending->fix.find("nvidia-smi -r -i 3"), std::string::npos) << pending->fix;
  h.row_remap_failure = true;
  auto failed = row_remapping(3, h);
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->severity, Severity::kError);
  EXPECT_NE(failed->seen.find("no spare rows"), std::string::npos) << failed->seen;

  h.clock_events = 0x20, h.temperature_c = 88;  // software thermal
  auto soft = clock_slowdown(3, h);
  ASSERT_TRUE(soft);
  EXPECT_EQ(soft->topic, "clocks");
  EXPECT_EQ(soft->severity, Severity::kWarning);
  EXPECT_NE(soft->seen.find("thermal slowdown at 88 C"), std::string::npos) << soft->seen;
  h.clock_events = 0x80;  // power brake
  auto brake = clock_slowdown(3, h);
  ASSERT_TRUE(brake);
  EXPECT_EQ(brake->severity, Severity::kError);
}

// on_gpu hands a Gpu's own index and health to a GpuHealth verdict: the
// same finding as judging that health under that index.
TEST(Health, OnGpuJudgesTheGpusHealthUnderItsIndex) {
  Machine m = machine::h100(2);
  m.gpus[1].health.ecc_uncorrected = 2;
  m.gpus[1].health.clock_events = 0x40;
  EXPECT_EQ(on_gpu<uncorrected_ecc>(m.gpus[0]), std::nullopt);
  auto ecc = on_gpu<uncorrected_ecc>(m.gpus[1]);
  ASSERT_TRUE(ecc);
  EXPECT_EQ(ecc->gpu, 1);
  EXPECT_EQ(ecc, uncorrected_ecc(1, m.gpus[1].health));
  EXPECT_EQ(on_gpu<clock_slowdown>(m.gpus[1]), clock_slowdown(1, m.gpus[1].health));
  EXPECT_EQ(on_gpu<row_remapping>(m.gpus[1]), std::nullopt);
}

}  // namespace
}  // namespace gpuenv
