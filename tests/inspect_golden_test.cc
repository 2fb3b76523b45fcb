// `gpuenv inspect`'s whole stdout and exit status, text and JSON, for every
// committed fixture (tests/fatbins/) on machines that cover each verdict
// (golden/inspect_runs.h), compared byte for byte with
// tests/golden/inspect.txt. stderr is left to inspect_test.cc (its wording
// belongs to the logger). The test only reads the file: rewriting it is a
// step of its own, whose diff a person reviews:
//   cmake --build build --target update-inspect-golden
// The counts in it are checked against cuobjdump by inspect_oracle_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "golden/inspect_runs.h"

namespace gpuenv {
namespace {

using golden::all_runs;
using golden::kGolden;

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST(InspectGolden, OutputIsUnchanged) {
  std::string now = all_runs();
  std::ifstream in(kGolden, std::ios::binary);
  ASSERT_TRUE(in) << kGolden << " is missing: cmake --build build --target update-inspect-golden";
  std::stringstream want;
  want << in.rdbuf();
  // The first line that differs, and the command whose output it is in.
  std::vector<std::string> a = lines(want.str()), b = lines(now);
  std::string cmd;
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    std::string la = i < a.size() ? a[i] : "<end>", lb = i < b.size() ? b[i] : "<end>";
    if (la.rfind("$ ", 0) == 0) cmd = la;
    ASSERT_EQ(la, lb) << kGolden << ":" << i + 1 << " after `" << cmd << "`";
  }
  EXPECT_EQ(want.str(), now);
}

}  // namespace
}  // namespace gpuenv
