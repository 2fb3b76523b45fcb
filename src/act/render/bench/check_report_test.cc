#include "act/render/bench/check_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace gpuenv::bench {
namespace {

// A check that checked nothing (check --machine on a healthy snapshot: the
// GPU tests measure this machine only) says so.
TEST(CheckReport, NothingCheckedSaysSo) {
  std::string text = render_check({}, false, 0.1, Style{});
  EXPECT_NE(text.find("nothing was checked"), std::string::npos) << text;
  EXPECT_NE(text.find("gpuenv check --quick: FAILED (nothing was checked)"), std::string::npos) << text;
  nlohmann::json j = check_json({}, false, 0.1, {}, {});
  EXPECT_EQ(j["passed"], false);
  EXPECT_EQ(j["nothing_checked"], true);
  EXPECT_TRUE(j["checks"].empty());
  nlohmann::json some = check_json({{"plan mig", CheckOutcome::kWarn, "hm"}}, false, 0.1, {}, {});
  EXPECT_EQ(some["passed"], true);
  EXPECT_EQ(some["nothing_checked"], false);
}

TEST(CheckReport, RenderAndJson) {
  std::vector<CheckItem> items = {{"GPU 0 check_gemm", CheckOutcome::kPass, "ok"}, {"plan mig", CheckOutcome::kWarn, "hm"}};
  std::string text = render_check(items, false, 2.5, Style{});
  EXPECT_NE(text.find("PASS  GPU 0 check_gemm"), std::string::npos) << text;
  EXPECT_NE(text.find("gpuenv check --quick: passed in 2.5 s"), std::string::npos) << text;
  items.push_back({"GPU 0 memtest", CheckOutcome::kFail, "bad"});
  EXPECT_NE(render_check(items, true, 1, Style{}).find("gpuenv check --long: FAILED"), std::string::npos);
  Result failed;
  failed.key = "memtest", failed.status = BenchStatus::kError, failed.message = "why";
  failed.target.devices = {{0, "NVIDIA H200", "GPU-x", {9, 0}, 132, 1}};
  WatchedGpu watched;
  watched.uuid = "GPU-x", watched.samples = 10, watched.sm_mhz_min = 1755;
  nlohmann::json j = check_json(items, true, 1, {failed}, {watched});
  EXPECT_EQ(j["passed"], false);
  EXPECT_EQ(j["level"], "long");
  EXPECT_EQ(j["checks"][2]["verdict"], "fail");
  EXPECT_EQ(j["results"][0]["status"], "error");
  EXPECT_EQ(j["watch"][0]["sm_mhz_min"], 1755);
  EXPECT_EQ(j["watch"][0]["uuid"], "GPU-x");
}

}  // namespace
}  // namespace gpuenv::bench
