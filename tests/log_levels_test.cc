// JSON log levels of a normal watched job (issue 21): its verdict and the
// last run's verdict are "info", not "error"; errors stay "error".
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "process.h"

namespace gpuenv::testing {
namespace {

using nlohmann::json;

std::vector<json> json_lines(const std::string& err) {
  std::vector<json> out;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    json j = json::parse(line, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << line;
    out.push_back(j);
  }
  return out;
}

// The level of the first line whose message starts with `prefix`, or "".
std::string level_of(const std::vector<json>& lines, const std::string& prefix) {
  for (const auto& j : lines)
    if (j.value("message", "").rfind(prefix, 0) == 0) return j.value("level", "");
  return "";
}

TEST(LogLevels, AWatchedJobsNormalEventsAreInfo) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "gpuenv-levels-XXXXXX").string();
  std::string root = mkdtemp(tmpl.data());
  ProcessOptions o = stand_ins("h200_job");
  o.env["GPUENV_CACHE_ROOT"] = root;
  o.env["GPUENV_WATCH"] = "1";
  o.env["GPUENV_WATCH_INTERVAL_MS"] = "100";
  o.env["GPUENV_LOG_FORMAT"] = "json";
  ProcessResult first = run_gpuenv({"run", "--", "sleep", "0.3"}, o);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(level_of(json_lines(first.err), "job 1: "), "info") << first.err;
  ProcessResult second = run_gpuenv({"run", "--", "sleep", "0.3"}, o);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  std::vector<json> lines = json_lines(second.err);
  EXPECT_EQ(level_of(lines, "last run of this command (job 1, "), "info") << second.err;
  EXPECT_EQ(level_of(lines, "job 2: "), "info") << second.err;
  for (const auto& j : lines) EXPECT_NE(j.value("level", ""), "error") << j;
  // An error is still one.
  ProcessResult bad = run_gpuenv({"run", "--", "/nonexistent/cmd"}, o);
  EXPECT_EQ(level_of(json_lines(bad.err), "cannot run /nonexistent/cmd"), "error") << bad.err;
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace gpuenv::testing
