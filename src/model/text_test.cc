#include "model/text.h"

#include <gtest/gtest.h>

namespace gpuenv {
namespace {

TEST(Text, JoinPutsTheSeparatorBetweenItemsOnly) {
  EXPECT_EQ(join({}, ", "), "");
  EXPECT_EQ(join({"a"}, ", "), "a");
  EXPECT_EQ(join({"docker", "veth", "lo"}, ","), "docker,veth,lo");
}

TEST(Text, UtcTimeIsRfc3339ToTheSecond) {
  EXPECT_EQ(utc_time(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(utc_time(1741089600), "2025-03-04T12:00:00Z");
}

TEST(Text, GpuLabelNamesTheGpuWhenItsNameIsKnown) {
  Gpu g;
  g.index = 3;
  EXPECT_EQ(gpu_label(g), "GPU 3");
  g.name = "NVIDIA H200";
  EXPECT_EQ(gpu_label(g), "GPU 3 (NVIDIA H200)");
}

}  // namespace
}  // namespace gpuenv
