// `gpuenv bench`'s sequence end to end with fakes: a fake backend in place
// of the CUDA plugin, a fake clock and progress, the real store in a
// temporary directory, stdout and the log kept in strings.
#include "flow/bench.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "builders.h"
#include "fake_bench_session.h"
#include "model/exit_codes.h"
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

struct Fakes : testing::SessionFakes {
  Fakes() : SessionFakes("gpuenv-flow-bench") {}
  BenchEnv env() {
    BenchEnv e;
    e.sense = [this](Machine* got) { return *got = m, sensed; };
    fill(&e);
    return e;
  }
};

BenchRequest gemm_copy_p2p() {
  BenchRequest r;
  r.sizes = "1024";
  r.only = {"gemm_bf16", "memcpy_d2d", "p2p"};
  r.trials = 3;
  return r;
}

TEST(BenchFlow, ResultsArePrintedAndTheOnesThatRanStored) {
  Fakes f;
  EXPECT_EQ(run_bench(gemm_copy_p2p(), f.env()), kExitOk) << f.out;
  EXPECT_TRUE(contains(f.out, "gpuenv bench: 1x NVIDIA H200")) << f.out;
  EXPECT_TRUE(contains(f.out, "gemm_bf16_1024")) << f.out;
  EXPECT_TRUE(contains(f.out, "memcpy_d2d                1000 GB/s      21 % of 4800 GB/s")) << f.out;
  EXPECT_TRUE(contains(f.out, "skipped:\n  0     p2p                needs 2 or more GPUs (1 visible)")) << f.out;
  EXPECT_TRUE(contains(f.out, "took 2.5 s; stored as run 1 in " + f.store_path)) << f.out;
  EXPECT_EQ(f.session.backend.calls.size(), 2u);
  EXPECT_EQ(f.session.backend.calls[0].m, 1024);
  EXPECT_EQ(f.progress.shown, (std::vector<std::string>{"0/4 gemm_bf16_1024", "1/4 memcpy_d2d", "2/4 p2p",
                                                        "3/4 p2p_via_host"}));
  EXPECT_EQ(f.progress.done_calls, 1);
  std::vector<store::HistoryRow> rows = f.stored();
  ASSERT_EQ(rows.size(), 2u);  // the skipped p2p and p2p_via_host are not
  EXPECT_EQ(rows[0].m.key, "gemm_bf16_1024");
  EXPECT_EQ(rows[0].command, "bench");
  EXPECT_EQ(rows[0].m.measured_at, "2026-01-02T03:04:05Z");
  EXPECT_EQ(rows[1].m.key, "memcpy_d2d");
  EXPECT_TRUE(f.said.lines().empty());
}

TEST(BenchFlow, JsonThenHistoryFromTheStore) {
  Fakes f;
  BenchRequest r = gemm_copy_p2p();
  r.json = true;
  ASSERT_EQ(run_bench(r, f.env()), kExitOk);
  auto j = nlohmann::json::parse(f.out);
  EXPECT_EQ(j["started_at"], "2026-01-02T03:04:05Z");
  EXPECT_EQ(j["seconds"], 2.5);
  EXPECT_EQ(j["store"], f.store_path);
  EXPECT_EQ(j["run_id"], 1);
  ASSERT_EQ(j["results"].size(), 4u);
  EXPECT_EQ(j["results"][0]["samples_s"].size(), 3u);
  EXPECT_EQ(j["results"][2]["status"], "skipped");
  EXPECT_TRUE(f.progress.shown.empty());  // none with --json
  EXPECT_EQ(f.progress.done_calls, 0);

  BenchRequest history;
  history.history = history.json = true;
  f.out.clear();
  ASSERT_EQ(run_bench(history, f.env()), kExitOk);
  auto h = nlohmann::json::parse(f.out);
  EXPECT_EQ(h["fingerprint"], store::fingerprint(f.m));
  ASSERT_EQ(h["measurements"].size(), 2u);
  EXPECT_EQ(h["measurements"][1]["key"], "memcpy_d2d");
  EXPECT_EQ(h["measurements"][1]["command"], "bench");
  history.json = false;
  f.out.clear();
  ASSERT_EQ(run_bench(history, f.env()), kExitOk);
  EXPECT_TRUE(contains(f.out, "memcpy_d2d  " + *f.m.gpus[0].uuid)) << f.out;
  EXPECT_EQ(f.session.opened, 1);  // --history measures nothing
}

TEST(BenchFlow, HistoryOfAMachineThatCannotBeReadIsBadInput) {
  Fakes f;
  f.sensed = false;
  BenchRequest history;
  history.history = true;
  EXPECT_EQ(run_bench(history, f.env()), kExitBadInput);
  EXPECT_EQ(f.out, "");
}

TEST(BenchFlow, AWrongResultFailsAndNoStoreKeepsNothing) {
  Fakes f;
  f.session.backend.status["gemm"] = GPUENV_BENCH_WRONG;
  BenchRequest r = gemm_copy_p2p();
  r.no_store = true;
  EXPECT_EQ(run_bench(r, f.env()), kExitFailure);
  EXPECT_TRUE(contains(f.out, "WRONG: fake")) << f.out;
  EXPECT_FALSE(contains(f.out, "stored as run")) << f.out;
  EXPECT_FALSE(std::filesystem::exists(f.store_path));
}

// The plugin missing (or CUDA seeing no chosen device) is said as the
// "plugin" error and exits 1 (docs/bench.md, "Exit codes"); nothing runs.
TEST(BenchFlow, WithoutThePluginItSaysWhyAndFails) {
  struct Row {
    const char* description;
    std::string refusal, devices_error;
    std::vector<int> devices;
    bool no_gpu;
    std::string said;
  } rows[] = {
      {"the plugin cannot load", "cannot load the CUDA plugin libgpuenv-bench.so; set GPUENV_BENCH_PLUGIN", "", {},
       false, "cannot load the CUDA plugin libgpuenv-bench.so; set GPUENV_BENCH_PLUGIN"},
      {"CUDA fails", "", "no CUDA-capable device is detected", {}, false, "no CUDA-capable device is detected"},
      {"CUDA sees none", "", "", {}, true, "CUDA sees no GPU (check CUDA_VISIBLE_DEVICES and the driver)"},
      {"--device names none", "", "", {7}, false, "--device: no such CUDA device (1 visible)"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.description);
    Fakes f;
    f.session.refusal = row.refusal;
    f.session.backend.devices_error = row.devices_error;
    if (row.no_gpu) f.session.backend.gpus.clear();
    BenchRequest r = gemm_copy_p2p();
    r.devices = row.devices;
    EXPECT_EQ(run_bench(r, f.env()), kExitFailure);
    auto line = f.said.find("plugin");
    ASSERT_TRUE(line);
    EXPECT_EQ(line->level, Severity::kError);
    EXPECT_EQ(line->text, row.said);
    EXPECT_TRUE(f.session.backend.calls.empty());
    EXPECT_EQ(f.out, "");
    EXPECT_FALSE(std::filesystem::exists(f.store_path));
  }
}

TEST(BenchFlow, UsageErrorsOpenNothing) {
  struct Row {
    const char* description;
    BenchRequest request;
    std::string said;
  };
  auto request = [](auto set) {
    BenchRequest r;
    set(r);
    return r;
  };
  const Row rows[] = {
      {"bad sizes", request([](BenchRequest& r) { r.sizes = "4k"; }), "--sizes 4k: expected sizes from 16 to 65536"},
      {"no trial", request([](BenchRequest& r) { r.trials = 0; }), "--trials: expected 1 to "},
      {"a snapshot without --history", request([](BenchRequest& r) { r.machine_file = "x.json"; }),
       "--machine goes only with --history"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.description);
    Fakes f;
    EXPECT_EQ(run_bench(row.request, f.env()), kExitUsage);
    auto line = f.said.find("usage");
    ASSERT_TRUE(line);
    EXPECT_TRUE(contains(line->text, row.said)) << line->text;
    EXPECT_EQ(f.session.opened, 0);
    EXPECT_EQ(f.out, "");
  }
}

}  // namespace
}  // namespace gpuenv::flow
