#include "model/gpu_label.h"

#include <gtest/gtest.h>

namespace gpuenv {
namespace {

TEST(GpuLabel, GpuLabelNamesTheGpuWhenItsNameIsKnown) {
  Gpu g;
  g.index = 3;
  EXPECT_EQ(gpu_label(g), "GPU 3");
  g.name = "NVIDIA H200";
  EXPECT_EQ(gpu_label(g), "GPU 3 (NVIDIA H200)");
}

}  // namespace
}  // namespace gpuenv
