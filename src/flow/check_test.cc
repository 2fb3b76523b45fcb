// `gpuenv check`'s sequence end to end with fakes: a fake backend in place
// of the CUDA plugin, a fake NVML watch, a fake clock and progress, the real
// store in a temporary directory, stdout and the log kept in strings.
#include "flow/check.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "builders.h"
#include "fake_bench_session.h"
#include "model/exit_codes.h"
#include "model/hardware/clock_events.h"
#include "process.h"
#include "said.h"
#include "store/fingerprint.h"
#include "text_files.h"

namespace gpuenv::flow {
namespace {

namespace machine = gpuenv::testing::machine;
using gpuenv::testing::FakeSession;
using gpuenv::testing::RecordedProgress;
using gpuenv::testing::Said;

using testing::contains;

// Sees each GPU it is started on as `seen` says, or refuses to start.
class FakeWatch : public GpuWatch {
 public:
  bool start(const std::vector<std::string>& uuids, std::chrono::milliseconds interval, Problem* err) override {
    started_on = uuids;
    every = interval;
    if (refusal) *err = *refusal;
    return !refusal;
  }
  std::vector<WatchedGpu> stop() override {
    ++stops;
    std::vector<WatchedGpu> out;
    for (const std::string& uuid : started_on) {
      WatchedGpu g = seen;
      g.uuid = uuid;
      out.push_back(g);
    }
    return out;
  }

  WatchedGpu seen;  // each GPU's, under its UUID
  std::optional<Problem> refusal;
  std::vector<std::string> started_on;
  std::chrono::milliseconds every{0};
  int stops = 0;
};

// A healthy watch: clocks held back only by the power cap, no new ECC errors.
WatchedGpu healthy() {
  WatchedGpu g;
  g.samples = 12, g.sm_mhz_min = 1755, g.sm_mhz_max = 1980, g.clock_events = clock_event::kSwPowerCap;
  g.ecc_uncorrected_before = g.ecc_uncorrected_after = 0;
  g.remapping_pending = g.remapping_failed = false;
  return g;
}

// The shared fakes, a fake NVML watch that sees a healthy GPU, and how often the machine was sensed.
struct CheckFakes : testing::SessionFakes {
  FakeWatch watch;
  int sense_calls = 0;
  CheckFakes() : SessionFakes("gpuenv-flow-check") { watch.seen = healthy(); }
  CheckEnv env() {
    CheckEnv e;
    e.sense = [this](Machine* got, Options*) { return ++sense_calls, *got = m, sensed; };
    e.watch = &watch;
    fill(&e);
    return e;
  }
};

std::vector<std::string> called_ops(const testing::FakeBackend& b) {
  std::vector<std::string> ops;
  for (const auto& c : b.calls) ops.push_back(c.op);
  return ops;
}

TEST(CheckFlow, QuickPassesAndKeepsItsFigures) {
  CheckFakes f;
  EXPECT_EQ(run_check({}, f.env()), kExitOk) << f.out;
  EXPECT_TRUE(contains(f.out, "PASS  GPU 0 check_gemm")) << f.out;
  EXPECT_TRUE(contains(f.out, "PASS  GPU 0 check_copy")) << f.out;
  EXPECT_TRUE(contains(f.out, "gpuenv check --quick: passed in 2.5 s")) << f.out;
  EXPECT_EQ(called_ops(f.session.backend), (std::vector<std::string>{"gemm", "copy_kernel"}));
  EXPECT_EQ(f.progress.shown, (std::vector<std::string>{"0/2 check_gemm", "1/2 check_copy"}));
  EXPECT_EQ(f.progress.done_calls, 1);
  EXPECT_TRUE(f.watch.started_on.empty());  // --quick is not watched
  EXPECT_EQ(f.watch.stops, 0);
  std::vector<store::HistoryRow> rows = f.stored();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].command, "check");
  EXPECT_EQ(rows[0].m.key, "check_gemm");
  EXPECT_EQ(rows[0].m.measured_at, "2026-01-02T03:04:05Z");
  EXPECT_TRUE(f.said.lines().empty());
}

TEST(CheckFlow, AWrongResultFails) {
  CheckFakes f;
  f.session.backend.status["copy_kernel"] = GPUENV_BENCH_WRONG;
  CheckRequest r;
  r.json = r.no_store = true;
  EXPECT_EQ(run_check(r, f.env()), kExitFailure);
  auto j = nlohmann::json::parse(f.out);
  EXPECT_EQ(j["passed"], false);
  EXPECT_EQ(j["level"], "quick");
  EXPECT_EQ(j["seconds"], 2.5);
  ASSERT_EQ(j["checks"].size(), 2u);
  EXPECT_EQ(j["checks"][1]["name"], "GPU 0 check_copy");
  EXPECT_EQ(j["checks"][1]["verdict"], "fail");
  EXPECT_EQ(j["checks"][1]["message"], "wrong result: fake");
  EXPECT_EQ(j["results"][1]["status"], "wrong");
  EXPECT_TRUE(f.progress.shown.empty());  // none with --json
  EXPECT_FALSE(std::filesystem::exists(f.store_path));  // --no-store
}

// What doctor calls broken fails the check, however well the GPU tests went.
TEST(CheckFlow, ASickGpuFails) {
  CheckFakes f;
  f.m.gpus[0].fabric_state = "not_started";  // NVLink fabric not set up
  EXPECT_EQ(run_check({}, f.env()), kExitFailure);
  EXPECT_TRUE(contains(f.out, "FAIL  GPU 0 fabric")) << f.out;
  EXPECT_TRUE(contains(f.out, "PASS  GPU 0 check_gemm")) << f.out;
  EXPECT_TRUE(contains(f.out, "gpuenv check --quick: FAILED in")) << f.out;
  EXPECT_EQ(f.stored().size(), 2u);  // a failed check keeps its figures too
}

TEST(CheckFlow, LongRunsTheLongTestsWatched) {
  CheckFakes f;
  CheckRequest r;
  r.long_check = r.json = true;
  r.duration_s = 7;
  EXPECT_EQ(run_check(r, f.env()), kExitOk) << f.out;
  EXPECT_EQ(called_ops(f.session.backend),
            (std::vector<std::string>{"gemm", "copy_kernel", "sustained_gemm", "memtest"}));
  EXPECT_EQ(f.watch.started_on, (std::vector<std::string>{*f.m.gpus[0].uuid}));
  EXPECT_EQ(f.watch.every, std::chrono::milliseconds(500));
  EXPECT_EQ(f.watch.stops, 1);
  auto j = nlohmann::json::parse(f.out);
  EXPECT_EQ(j["passed"], true);
  EXPECT_EQ(j["level"], "long");
  ASSERT_EQ(j["watch"].size(), 1u);
  EXPECT_EQ(j["watch"][0]["uuid"], *f.m.gpus[0].uuid);
  EXPECT_EQ(j["watch"][0]["samples"], 12);
  ASSERT_EQ(j["checks"].size(), 6u);
  EXPECT_EQ(j["checks"][4]["name"], *f.m.gpus[0].uuid + " clocks");
  EXPECT_EQ(j["checks"][4]["verdict"], "pass");
  EXPECT_EQ(j["checks"][5]["name"], *f.m.gpus[0].uuid + " ECC");
}

TEST(CheckFlow, LongFailsOnWhatTheWatchSaw) {
  CheckFakes f;
  f.watch.seen.clock_events = clock_event::kHwSlowdown;
  f.watch.seen.ecc_uncorrected_after = 3;
  CheckRequest r;
  r.long_check = true;
  EXPECT_EQ(run_check(r, f.env()), kExitFailure);
  std::string uuid = *f.m.gpus[0].uuid;
  EXPECT_TRUE(contains(f.out, "FAIL  " + uuid + " clocks")) << f.out;
  EXPECT_TRUE(contains(f.out, "FAIL  " + uuid + " ECC")) << f.out;
  EXPECT_TRUE(contains(f.out, "3 new uncorrectable ECC errors")) << f.out;
  EXPECT_TRUE(contains(f.out, "gpuenv check --long: FAILED")) << f.out;
}

// A watch that cannot start is a warning: the long tests still run.
TEST(CheckFlow, LongUnwatchedWarns) {
  CheckFakes f;
  f.watch.refusal = Problem{"nvml", "nvml_library_not_found", "cannot load libnvidia-ml.so.1", ""};
  CheckRequest r;
  r.long_check = true;
  EXPECT_EQ(run_check(r, f.env()), kExitOk) << f.out;
  EXPECT_TRUE(contains(f.out, "WARN  NVML watch")) << f.out;
  EXPECT_TRUE(contains(f.out, "clocks and ECC not watched: cannot load libnvidia-ml.so.1")) << f.out;
  EXPECT_TRUE(contains(f.out, "PASS  GPU 0 memtest")) << f.out;
  EXPECT_EQ(f.watch.stops, 0);
}

// The plugin missing is a failed verdict (docs/bench.md, "Exit codes": 1).
TEST(CheckFlow, WithoutThePluginTheGpuChecksFail) {
  CheckFakes f;
  f.session.refusal = "cannot load the CUDA plugin libgpuenv-bench.so; set GPUENV_BENCH_PLUGIN";
  EXPECT_EQ(run_check({}, f.env()), kExitFailure);
  EXPECT_TRUE(contains(f.out, "FAIL  GPU checks                   cannot load the CUDA plugin")) << f.out;
  EXPECT_TRUE(f.session.backend.calls.empty());
  EXPECT_FALSE(std::filesystem::exists(f.store_path));
}

// With --machine the GPU tests do not run; a healthy snapshot with nothing
// to judge is a check that checked nothing, and that does not pass.
TEST(CheckFlow, NothingCheckedDoesNotPass) {
  CheckFakes f;
  CheckRequest r;
  r.machine_file = "h200.json";
  EXPECT_EQ(run_check(r, f.env()), kExitFailure) << f.out;
  EXPECT_TRUE(contains(f.out, "gpuenv check --quick: FAILED (nothing was checked)")) << f.out;
  auto said = f.said.find("nothing checked");
  ASSERT_TRUE(said);
  EXPECT_TRUE(contains(said->text, "with --machine the GPU tests do not run")) << said->text;
  EXPECT_EQ(f.session.opened, 0);
  EXPECT_FALSE(std::filesystem::exists(f.store_path));
  r.json = true;
  f.out.clear();
  EXPECT_EQ(run_check(r, f.env()), kExitFailure);
  auto j = nlohmann::json::parse(f.out);
  EXPECT_EQ(j["passed"], false);
  EXPECT_EQ(j["nothing_checked"], true);
}

TEST(CheckFlow, UsageAndAMachineThatCannotBeRead) {
  CheckFakes f;
  CheckRequest both;
  both.quick = both.long_check = true;
  EXPECT_EQ(run_check(both, f.env()), kExitUsage);
  EXPECT_TRUE(contains(f.said.find("usage")->text, "--quick or --long, not both"));
  CheckRequest forever;
  forever.duration_s = 86401;
  EXPECT_EQ(run_check(forever, f.env()), kExitUsage);
  EXPECT_EQ(f.sense_calls, 0);
  f.sensed = false;
  EXPECT_EQ(run_check({}, f.env()), kExitBadInput);
  EXPECT_EQ(f.session.opened, 0);
  EXPECT_EQ(f.out, "");
}

}  // namespace
}  // namespace gpuenv::flow
