// gpuenv export's profiling fields before Hopper (docs/metrics.md,
// "Profiling fields"): from the stand-in DCGM (tests/fake_dcgm) where it is
// given, said on the start-up line where it is not or fails, and NVML GPM
// still the source on Hopper.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "container_support.h"
#include "export_process.h"
#include "process.h"
#include "test_paths.h"
#include "wait_until.h"

namespace gpuenv::testing {
namespace {

constexpr const char* kNoDcgm =
    "DCGM_FI_PROF_*: NVML GPM needs Hopper or newer; install DCGM (libdcgm.so.4) to serve them on this A100";

std::string stand_in_dcgm() { return test_paths::fake_dir() + "/libdcgm.so.4"; }

std::vector<std::string> samples(const std::string& body, const std::string& metric) {
  std::vector<std::string> out;
  std::istringstream in(body);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(metric + "{", 0) == 0) out.push_back(line);
  return out;
}

// The value of `metric` on the sample whose labels start gpu="N".
std::string value_of(const std::string& body, const std::string& metric, int gpu) {
  for (const std::string& line : samples(body, metric))
    if (line.rfind(metric + "{gpu=\"" + std::to_string(gpu) + "\"", 0) == 0) return line.substr(line.rfind(' ') + 1);
  return "";
}

TEST(ExportDcgm, AnA100ServesTheProfilingFieldsFromDcgm) {
  ExportProcess e("a100_nvlink_8", {}, {{"GPUENV_DCGM_LIBRARY", stand_in_dcgm()}});
  ASSERT_GT(e.port(), 0) << e.log();
  std::string body;
  ASSERT_TRUE(wait_until([&] { return samples(body = e.scrape(), "DCGM_FI_PROF_GR_ENGINE_ACTIVE").size() == 8; }))
      << body << e.log();
  // By UUID, though DCGM numbers the GPUs from the other end.
  EXPECT_EQ(value_of(body, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", 0), "0.62") << body;
  EXPECT_EQ(value_of(body, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", 0), "0.91");
  EXPECT_EQ(value_of(body, "DCGM_FI_PROF_DRAM_ACTIVE", 0), "0.37");
  // The fields dcgm-exporter leaves out by default, under gpuenv's name.
  std::vector<std::string> gpu0 = samples(body, "gpuenv_gpu_activity_ratio");
  std::erase_if(gpu0, [](const std::string& l) { return l.find("{gpu=\"0\"") == std::string::npos; });
  EXPECT_EQ(gpu0.size(), 7u) << body;
  for (const char* expect : {"engine=\"sm\"} 0.85", "engine=\"sm_occupancy\"} 0.41", "engine=\"fp32\"} 0.12",
                             "engine=\"fp16\"} 0.05"})
    EXPECT_TRUE(std::any_of(gpu0.begin(), gpu0.end(), [&](const std::string& l) { return l.find(expect) != l.npos; }))
        << expect << "\n" << body;
  EXPECT_EQ(value_of(body, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", 7), "0.3");
  // GPU 7's tensor pipe is blank in DCGM: absent, not zero.
  EXPECT_EQ(samples(body, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE").size(), 7u);
  EXPECT_EQ(value_of(body, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", 7), "");
  EXPECT_EQ(e.start_line().find("DCGM_FI_PROF_*"), std::string::npos) << e.start_line();
}

TEST(ExportDcgm, WithoutDcgmTheStartLineSaysWhichFieldsAndWhy) {
  ExportProcess e("a100_nvlink_8", {}, {});
  ASSERT_GT(e.port(), 0) << e.log();
  EXPECT_NE(e.start_line().find(kNoDcgm), std::string::npos) << e.start_line();
  std::string body = e.scrape();
  ASSERT_FALSE(samples(body, "DCGM_FI_DEV_FB_USED").empty()) << body;
  EXPECT_TRUE(samples(body, "DCGM_FI_PROF_GR_ENGINE_ACTIVE").empty()) << body;
  EXPECT_TRUE(samples(body, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE").empty());
}

TEST(ExportDcgm, ADcgmThatFailsIsSaidAndTheRestIsServed) {
  ExportProcess start("a100_nvlink_8", {}, {{"GPUENV_DCGM_LIBRARY", stand_in_dcgm()}, {"FAKE_DCGM_FAULT", "start=-33"}});
  ASSERT_GT(start.port(), 0) << start.log();
  EXPECT_NE(start.start_line().find("DCGM_FI_PROF_*: NVML GPM needs Hopper or newer, and DCGM (libdcgm.so.4) cannot "
                                    "serve them on this A100: dcgmStartEmbedded_v2 returned -33 (This request is "
                                    "serviced by a module of DCGM that is not currently loaded)"),
            std::string::npos)
      << start.start_line();
  std::string body = start.scrape();
  EXPECT_FALSE(samples(body, "DCGM_FI_DEV_FB_USED").empty()) << body;
  EXPECT_TRUE(samples(body, "DCGM_FI_PROF_GR_ENGINE_ACTIVE").empty()) << body;

  ExportProcess watch("a100_nvlink_8", {}, {{"GPUENV_DCGM_LIBRARY", stand_in_dcgm()}, {"FAKE_DCGM_FAULT", "watch=-2"}});
  ASSERT_GT(watch.port(), 0) << watch.log();
  EXPECT_NE(watch.start_line().find("dcgmWatchFields returned -2"), std::string::npos) << watch.start_line();

  ExportProcess read("a100_nvlink_8", {}, {{"GPUENV_DCGM_LIBRARY", stand_in_dcgm()}, {"FAKE_DCGM_FAULT", "latest=-6"}});
  ASSERT_GT(read.port(), 0) << read.log();
  EXPECT_NE(read.start_line().find("dcgmEntitiesGetLatestValues returned -6"), std::string::npos) << read.start_line();
  body = read.scrape();
  EXPECT_FALSE(samples(body, "DCGM_FI_DEV_FB_USED").empty()) << body;
  EXPECT_TRUE(samples(body, "DCGM_FI_PROF_GR_ENGINE_ACTIVE").empty()) << body;
}

TEST(ExportDcgm, OnHopperGpmStaysTheSource) {
  ScratchDir dir;
  std::string trace = dir.path() + "/dcgm-calls";
  ExportProcess e("h200_8_busy", {}, {{"GPUENV_DCGM_LIBRARY", stand_in_dcgm()}, {"FAKE_DCGM_TRACE", trace}});
  ASSERT_GT(e.port(), 0) << e.log();
  std::string body;
  ASSERT_TRUE(wait_until([&] { return value_of(body = e.scrape(), "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", 6) == "0.94"; }))
      << body;
  EXPECT_EQ(e.start_line().find("DCGM_FI_PROF_*"), std::string::npos) << e.start_line();
  EXPECT_FALSE(std::ifstream(trace).good()) << "DCGM was called on Hopper";
}

}  // namespace
}  // namespace gpuenv::testing
