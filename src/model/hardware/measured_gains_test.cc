// The measured gains are docs/performance.md's: each row's two throughputs
// are read back from the table of the run that measured them, so the
// figure a rule cites cannot drift from the measurement.
#include "model/hardware/measured_gains.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include "test_paths.h"

namespace gpuenv {
namespace {

std::string performance_md() {
  std::ifstream in((test_paths::tests_dir() + "/../docs/performance.md"));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The number in the first cell after `row` ("| plain | 51,976 |" -> 51976)
// within the section that starts with `heading`; -1 when not there.
double table_figure(const std::string& doc, const std::string& heading, const std::string& row) {
  std::size_t section = doc.find("\n" + heading + "\n");
  if (section == std::string::npos) return -1;
  std::size_t end = doc.find("\n## ", section + 1);
  std::size_t at = doc.find("\n| " + row + " | ", section);
  if (at == std::string::npos || at > end) return -1;
  std::string digits;
  for (std::size_t i = at + row.size() + 6; i < doc.size() && doc[i] != ' ' && doc[i] != '|'; ++i)
    if (doc[i] != ',') digits += doc[i];
  return digits.empty() ? -1 : std::stod(digits);
}

TEST(MeasuredGains, Tf32IsTheGpt2RunOfPerformanceMd) {
  std::string doc = performance_md();
  ASSERT_FALSE(doc.empty());
  const std::string heading = "## TF32: the fp32 GPT-2-small training loop";
  ASSERT_EQ(std::size(kTf32Gains), 1u);
  EXPECT_EQ(kTf32Gains[0].before, table_figure(doc, heading, "plain"));
  EXPECT_EQ(kTf32Gains[0].after,
            table_figure(doc, heading, "under `gpuenv run` (`TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1`)"));
  std::size_t section = doc.find(heading);
  EXPECT_NE(doc.find("H200 machine", section), std::string::npos) << "the GPU the row names";
}

TEST(MeasuredGains, DescribeGivesTheRatioAndBothThroughputs) {
  EXPECT_EQ(describe({"X", "a loop", 1000, 2500, "steps/s"}), "2.5x for a loop (1.0k -> 2.5k steps/s)");
}

}  // namespace
}  // namespace gpuenv
