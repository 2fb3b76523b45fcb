#include "act/rate_limited_log.h"

#include <gtest/gtest.h>

namespace gpuenv {
namespace {

using nlohmann::json;

// The first line at once, then at most one per period carrying how many
// were left out since the last.
TEST(Log, RateLimitedLogSaysARepeatOncePerPeriodWithACount) {
  using std::chrono::seconds;
  configure_log(LogFormat::kJson, "export");
  RateLimitedLog log(seconds(60), "pod_resources");
  auto t0 = std::chrono::steady_clock::now();
  ::testing::internal::CaptureStderr();
  log.log_at(t0, "no pod labels: 1", Severity::kWarning, {{"error", "1"}});
  for (int i = 2; i <= 20; ++i) log.log_at(t0 + seconds(i), "no pod labels", Severity::kWarning, {});
  log.log_at(t0 + seconds(61), "no pod labels: 21", Severity::kWarning, {});
  log.log_at(t0 + seconds(62), "no pod labels: 22", Severity::kWarning, {});
  std::string err = ::testing::internal::GetCapturedStderr();
  configure_log(LogFormat::kText, "");
  auto nl = err.find('\n');
  ASSERT_NE(nl, std::string::npos) << err;
  ASSERT_EQ(err.find('\n', nl + 1), err.size() - 1) << "two lines: " << err;
  json a = json::parse(err.substr(0, nl)), b = json::parse(err.substr(nl + 1));
  EXPECT_EQ(a["msg"], "pod_resources");
  EXPECT_EQ(a["message"], "no pod labels: 1");
  EXPECT_FALSE(a.contains("left_out"));
  EXPECT_EQ(b["message"], "no pod labels: 21 (and 19 more like it in the last 61 s)");
  EXPECT_EQ(b["left_out"], 19);
}

}  // namespace
}  // namespace gpuenv
