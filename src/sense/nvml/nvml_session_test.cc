// The one NVML session against the stand-in libnvidia-ml: open and close
// (nvmlInit, nvmlShutdown), GPUs by index and by UUID, and every failure a
// Problem from the error table.
#include "sense/nvml/nvml_session.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "sense/nvml/nvml_test_support.h"

namespace gpuenv {
namespace {

using testing::FakeNvidiaTest;
using testing::kFakeNvml;
using testing::scenario;

constexpr const char* kFirst = "GPU-6c1f0c3e-8a52-4b0e-9d3a-2f1e7b9c4d10";
constexpr const char* kSecond = "GPU-0d2f1c3e-8a52-4b0e-9d3a-2f1e7b9c4d11";

class NvmlSessionTest : public FakeNvidiaTest {};

bool traced(const std::vector<std::string>& calls, const std::string& fn) {
  return std::find(calls.begin(), calls.end(), fn) != calls.end();
}

TEST_F(NvmlSessionTest, OpensAndShutsDownWhenItEnds) {
  testing::set_env("FAKE_NVML_SCENARIO", scenario("h200"));
  {
    NvmlSession s;
    Problem err;
    ASSERT_TRUE(s.open(kFakeNvml, &err)) << err.message;
    EXPECT_TRUE(s.is_open());
    unsigned n = 0;
    ASSERT_TRUE(s.count(&n, &err)) << err.message;
    EXPECT_EQ(n, 1u);
    EXPECT_FALSE(traced(nvml_trace(), "nvmlShutdown"));
  }
  EXPECT_TRUE(traced(nvml_trace(), "nvmlInit_v2"));
  EXPECT_TRUE(traced(nvml_trace(), "nvmlShutdown"));
}

TEST_F(NvmlSessionTest, FindsGpusByUuidInNvmlOrder) {
  testing::set_env("FAKE_NVML_SCENARIO", scenario("h200x2_other_gpu"));
  NvmlSession s;
  Problem err;
  ASSERT_TRUE(s.open(kFakeNvml, &err)) << err.message;
  std::vector<NvmlGpu> gpus;
  ASSERT_TRUE(s.gpus(&gpus, &err)) << err.message;
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].uuid, kFirst);
  EXPECT_EQ(gpus[1].uuid, kSecond);
  std::vector<NvmlGpu> found;
  ASSERT_TRUE(s.find({kSecond, kFirst}, &found, &err)) << err.message;
  ASSERT_EQ(found.size(), 2u);  // in the order asked
  EXPECT_EQ(found[1].uuid, kFirst);
  const NvmlGpu& g = found[0];
  EXPECT_EQ(g.uuid, kSecond);
  EXPECT_EQ(g.index, 1u);
  EXPECT_EQ(g.handle, gpus[1].handle);
  nvml::Device by_index = nullptr;
  ASSERT_TRUE(s.handle(1, &by_index, &err)) << err.message;
  EXPECT_EQ(by_index, g.handle);
  EXPECT_TRUE(NvmlSession::all_listed(gpus, {kSecond, kFirst}, &err));
}

TEST_F(NvmlSessionTest, AUuidNvmlDoesNotListIsTheErrorTablesGpuNotFound) {
  testing::set_env("FAKE_NVML_SCENARIO", scenario("h200"));
  NvmlSession s;
  Problem err;
  ASSERT_TRUE(s.open(kFakeNvml, &err)) << err.message;
  std::vector<NvmlGpu> found;
  EXPECT_FALSE(s.find({kSecond}, &found, &err));
  EXPECT_EQ(err.code, "nvml_gpu_not_found");
  EXPECT_EQ(err.source, "nvml");
  EXPECT_NE(err.message.find(kSecond), std::string::npos) << err.message;
  EXPECT_NE(err.message.find("NVML_ERROR_GPU_NOT_FOUND"), std::string::npos) << err.message;
  EXPECT_FALSE(err.fix.empty());
  std::vector<NvmlGpu> gpus;
  ASSERT_TRUE(s.gpus(&gpus, &err));
  Problem missing;
  EXPECT_FALSE(NvmlSession::all_listed(gpus, {kFirst, kSecond}, &missing));
  EXPECT_EQ(missing.code, "nvml_gpu_not_found");
  EXPECT_NE(missing.message.find(kSecond), std::string::npos) << missing.message;
}

TEST_F(NvmlSessionTest, AnIndexBeyondTheCountIsAProblem) {
  testing::set_env("FAKE_NVML_SCENARIO", scenario("h200"));
  NvmlSession s;
  Problem err;
  ASSERT_TRUE(s.open(kFakeNvml, &err)) << err.message;
  nvml::Device d = nullptr;
  EXPECT_FALSE(s.handle(5, &d, &err));
  EXPECT_EQ(err.source, "nvml");
  EXPECT_NE(err.message.find("GPU 5"), std::string::npos) << err.message;
}

TEST_F(NvmlSessionTest, OpenFailuresAreTheErrorTablesProblems) {
  NvmlSession none;
  Problem err;
  EXPECT_FALSE(none.open(testing::kNoNvml, &err));
  EXPECT_EQ(err.code, "nvml_library_not_found");
  EXPECT_FALSE(none.is_open());
  testing::set_env("FAKE_NVML_SCENARIO", scenario("init_driver_not_loaded"));
  NvmlSession down;
  EXPECT_FALSE(down.open(kFakeNvml, &err));
  EXPECT_EQ(err.code, "nvml_driver_not_loaded");
  EXPECT_NE(err.message.find("nvmlInit_v2"), std::string::npos) << err.message;
  EXPECT_FALSE(down.is_open());
  EXPECT_FALSE(traced(nvml_trace(), "nvmlShutdown"));  // never initialised, never shut down
}

}  // namespace
}  // namespace gpuenv
