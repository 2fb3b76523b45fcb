#include "sys/nearest_word.h"

#include <gtest/gtest.h>

namespace gpuenv {
namespace {

TEST(NearestWord, EditDistanceCountsEditsAndSwaps) {
  EXPECT_EQ(edit_distance("detec", "detect"), 1u);
  EXPECT_EQ(edit_distance("lables", "labels"), 1u);  // a swap is one edit
  EXPECT_EQ(edit_distance("--jsn", "--json"), 1u);
  EXPECT_EQ(edit_distance("", "env"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("same", "same"), 0u);
}

TEST(NearestWord, NearestSuggestsOnlyWhatIsNear) {
  std::vector<std::string> commands = {"detect", "env", "explain", "labels", "plan-memory", "check"};
  EXPECT_EQ(nearest("detec", commands), "detect");
  EXPECT_EQ(nearest("lables", commands), "labels");
  EXPECT_EQ(nearest("plan", commands), "plan-memory");  // the only one it begins
  EXPECT_EQ(nearest("ev", commands), "env");
  EXPECT_EQ(nearest("frobnicate", commands), "");
  EXPECT_EQ(nearest("e", commands), "");  // begins two, near none
  EXPECT_EQ(nearest("x", {}), "");
}

}  // namespace
}  // namespace gpuenv
