#include "sense/nvml/nvml_call.h"

#include <gtest/gtest.h>

namespace gpuenv {
namespace {

int g_calls = 0;
nvml::Return g_answer = nvml::kSuccess;

nvml::Return answer(nvml::Device, unsigned* v) {
  ++g_calls;
  *v = 7;
  return g_answer;
}

// An Nvml whose one function answers `rc` (its library stays unloaded).
void answering(nvml::Return rc, Nvml* nvml) {
  g_calls = 0, g_answer = rc;
  nvml->fn.power_limit = {answer, "nvmlDeviceGetPowerManagementLimit"};
}

TEST(NvmlCaller, AReportingCallerKeepsEachFailureAsAProblem) {
  Nvml nvml;
  answering(nvml::kErrorUnknown, &nvml);
  std::vector<Problem> problems;
  NvmlCaller call(nvml, "GPU 0", &problems);
  EXPECT_EQ(get_uint(call, nvml.fn.power_limit, nullptr), std::nullopt);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].message.find("nvmlDeviceGetPowerManagementLimit(GPU 0)"), std::string::npos)
      << problems[0].message;
}

TEST(NvmlCaller, AWatchersCallerDropsFailuresButStopsAtALostGpu) {
  Nvml nvml;
  answering(nvml::kErrorUnknown, &nvml);
  NvmlCaller quiet(nvml);
  EXPECT_EQ(get_uint(quiet, nvml.fn.power_limit, nullptr), std::nullopt);
  EXPECT_EQ(get_uint(quiet, nvml.fn.power_limit, nullptr), std::nullopt);
  EXPECT_EQ(g_calls, 2);  // asked again: an error is no reason to stop
  EXPECT_FALSE(quiet.stopped());

  answering(nvml::kErrorGpuIsLost, &nvml);
  Gpu lost;
  NvmlCaller watcher(nvml, &lost);
  EXPECT_EQ(get_uint(watcher, nvml.fn.power_limit, nullptr), std::nullopt);
  EXPECT_EQ(get_uint(watcher, nvml.fn.power_limit, nullptr), std::nullopt);
  EXPECT_EQ(g_calls, 1);  // a lost GPU is asked nothing more
  EXPECT_TRUE(watcher.stopped());
  ASSERT_TRUE(lost.problem.has_value());

  answering(nvml::kSuccess, &nvml);
  NvmlCaller ok(nvml);
  EXPECT_EQ(get_uint(ok, nvml.fn.power_limit, nullptr), 7u);
}

}  // namespace
}  // namespace gpuenv
