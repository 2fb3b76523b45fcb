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
#include "process.h"
#include "test_paths.h"
#include "wait_until.h"

namespace gpuenv::testing {
namespace {

constexpr const char* kDcgmListening = "listening on http://127.0.0.1:";
constexpr const char* kNoDcgm =
    "DCGM_FI_PROF_*: NVML GPM needs Hopper or newer; install DCGM (libdcgm.so.4) to serve them on this A100";

std::string stand_in_dcgm() { return test_paths::fake_dir() + "/libdcgm.so.4"; }

// `gpuenv export` over a scenario, with `env` on top of the stand-ins'.
class DcgmExporter {
 public:
  DcgmExporter(const std::string& scenario, const std::map<std::string, std::string>& env)
      : bg_({test_paths::gpuenv_bin(), "export", "--listen", "127.0.0.1:0", "--interval", "0.2"}, with(scenario, env)) {
    if (!bg_.wait_for_log(kDcgmListening, 30000)) return;
    std::string log = bg_.log();
    port_ = std::atoi(log.c_str() + log.find(kDcgmListening) + std::string(kDcgmListening).size());
  }
  int port() const { return port_; }
  std::string log() const { return bg_.log(); }
  /// The /metrics body ("" when it cannot be fetched).
  std::string metrics() const {
    ProcessResult r = run_process({"curl", "-sS", "http://127.0.0.1:" + std::to_string(port_) + "/metrics"},
                                  {{}, "", 10000});
    return r.exit_code == 0 ? r.out : "";
  }
  /// The listening line.
  std::string start_line() const {
    std::string log = bg_.log();
    std::size_t at = log.find(kDcgmListening);
    if (at == std::string::npos) return "";
    return log.substr(at, log.find('\n', at) - at);
  }

 private:
  static std::map<std::string, std::string> with(const std::string& scenario,
                                                 const std::map<std::string, std::string>& env) {
    std::map<std::string, std::string> e = stand_in_env(scenario);
    for (const auto& [k, v] : env) e[k] = v;
    return e;
  }
  Background bg_;
  int port_ = 0;
};

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
  DcgmExporter e("a100_nvlink_8", {{"GPUENV_DCGM_LIBRARY", stand_in_dcgm()}});
  ASSERT_GT(e.port(), 0) << e.log();
  std::string body;
  ASSERT_TRUE(wait_until([&] { return samples(body = e.metrics(), "DCGM_FI_PROF_GR_ENGINE_ACTIVE").size() == 8; }))
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
  DcgmExporter e("a100_nvlink_8", {});
  ASSERT_GT(e.port(), 0) << e.log();
  EXPECT_NE(e.start_line().find(kNoDcgm), std::string::npos) << e.start_line();
  std::string body = e.metrics();
  ASSERT_FALSE(samples(body, "DCGM_FI_DEV_FB_USED").empty()) << body;
  EXPECT_TRUE(samples(body, "DCGM_FI_PROF_GR_ENGINE_ACTIVE").empty()) << body;
  EXPECT_TRUE(samples(body, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE").empty());
}

TEST(ExportDcgm, ADcgmThatFailsIsSaidAndTheRestIsServed) {
  DcgmExporter start("a100_nvlink_8", {{"GPUENV_DCGM_LIBRARY", stand_in_dcgm()}, {"FAKE_DCGM_FAULT", "start=-33"}});
  ASSERT_GT(start.port(), 0) << start.log();
  EXPECT_NE(start.start_line().find("DCGM_FI_PROF_*: NVML GPM needs Hopper or newer, and DCGM (libdcgm.so.4) cannot "
                                    "serve them on this A100: dcgmStartEmbedded_v2 returned -33 (This request is "
                                    "serviced by a module of DCGM that is not currently loaded)"),
            std::string::npos)
      << start.start_line();
  std::string body = start.metrics();
  EXPECT_FALSE(samples(body, "DCGM_FI_DEV_FB_USED").empty()) << body;
  EXPECT_TRUE(samples(body, "DCGM_FI_PROF_GR_ENGINE_ACTIVE").empty()) << body;

  DcgmExporter watch("a100_nvlink_8", {{"GPUENV_DCGM_LIBRARY", stand_in_dcgm()}, {"FAKE_DCGM_FAULT", "watch=-2"}});
  ASSERT_GT(watch.port(), 0) << watch.log();
  EXPECT_NE(watch.start_line().find("dcgmWatchFields returned -2"), std::string::npos) << watch.start_line();

  DcgmExporter read("a100_nvlink_8", {{"GPUENV_DCGM_LIBRARY", stand_in_dcgm()}, {"FAKE_DCGM_FAULT", "latest=-6"}});
  ASSERT_GT(read.port(), 0) << read.log();
  EXPECT_NE(read.start_line().find("dcgmEntitiesGetLatestValues returned -6"), std::string::npos) << read.start_line();
  body = read.metrics();
  EXPECT_FALSE(samples(body, "DCGM_FI_DEV_FB_USED").empty()) << body;
  EXPECT_TRUE(samples(body, "DCGM_FI_PROF_GR_ENGINE_ACTIVE").empty()) << body;
}

TEST(ExportDcgm, OnHopperGpmStaysTheSource) {
  ScratchDir dir;
  std::string trace = dir.path() + "/dcgm-calls";
  DcgmExporter e("h200_8_busy", {{"GPUENV_DCGM_LIBRARY", stand_in_dcgm()}, {"FAKE_DCGM_TRACE", trace}});
  ASSERT_GT(e.port(), 0) << e.log();
  std::string body;
  ASSERT_TRUE(wait_until([&] { return value_of(body = e.metrics(), "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", 6) == "0.94"; }))
      << body;
  EXPECT_EQ(e.start_line().find("DCGM_FI_PROF_*"), std::string::npos) << e.start_line();
  EXPECT_FALSE(std::ifstream(trace).good()) << "DCGM was called on Hopper";
}

}  // namespace
}  // namespace gpuenv::testing
