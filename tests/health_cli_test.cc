// A lost GPU and a failing driver outside doctor: run, env and explain warn
// on stderr and leave the lost GPU out of CUDA_VISIBLE_DEVICES; detect puts
// problems on stderr and exits 5 when the driver is there but fails.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "process.h"
#include "text_files.h"

namespace gpuenv::testing {
namespace {

const std::string kHealthy = "GPU-14000000-0000-4000-8000-000000000000,GPU-14000002-0000-4000-8000-000000000002";


using testing::contains;

int lines_with(const std::string& s, const std::string& part) {
  int n = 0;
  for (size_t at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) ++n;
  return n;
}

TEST(HealthCli, RunLeavesTheLostGpuOutAndWarns) {
  auto r = run_gpuenv({"run", "--", "sh", "-c", "echo $CUDA_VISIBLE_DEVICES"}, stand_ins("gpu_lost"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, kHealthy + "\n");
  EXPECT_EQ(lines_with(r.err, "GPU 1: "), 1) << r.err;
  EXPECT_TRUE(contains(r.err, "fix: ")) << r.err;
}

TEST(HealthCli, EnvAndExplainWarnOnStderr) {
  auto e = run_gpuenv({"env"}, stand_ins("gpu_lost"));
  EXPECT_EQ(e.exit_code, 0) << e.err;
  EXPECT_TRUE(contains(e.out, "CUDA_VISIBLE_DEVICES='" + kHealthy + "'")) << e.out;
  EXPECT_EQ(lines_with(e.err, "GPU 1: "), 1) << e.err;
  auto x = run_gpuenv({"explain", "--json"}, stand_ins("gpu_lost"));
  EXPECT_TRUE(contains(x.err, "GPU 1: ")) << x.err;
  auto j = nlohmann::json::parse(x.out);
  bool said = false;
  for (const auto& s : j["settings"])
    if (s["name"] == "CUDA_VISIBLE_DEVICES")
      said = s["value"] == kHealthy && contains(s["reason"].get<std::string>(), "GPU 1 failed");
  EXPECT_TRUE(said) << x.out;
  auto m = run_gpuenv({"env"}, stand_ins("init_version_mismatch"));
  EXPECT_EQ(m.exit_code, 0);
  EXPECT_TRUE(contains(m.err, "fix: ")) << m.err;
}

TEST(HealthCli, DetectFailsWhenTheDriverFails) {
  auto r = run_gpuenv({"detect"}, stand_ins("init_version_mismatch"));
  EXPECT_EQ(r.exit_code, 5) << r.err;
  EXPECT_FALSE(contains(r.out, "problem:")) << r.out;
  EXPECT_FALSE(contains(r.out, "No NVIDIA GPU found")) << r.out;  // they are there, unreadable (issue 37)
  EXPECT_TRUE(contains(r.out, "NVIDIA GPUs unreadable")) << r.out;
  EXPECT_TRUE(contains(r.out, "until a reboot or a reload of the nvidia modules")) << r.out;
  EXPECT_TRUE(contains(r.err, "problem:")) << r.err;
  auto j = run_gpuenv({"detect", "--json"}, stand_ins("init_version_mismatch"));
  EXPECT_EQ(j.exit_code, 5);
  EXPECT_FALSE(nlohmann::json::parse(j.out)["nvidia"]["problems"].empty()) << j.out;
  auto lost = run_gpuenv({"detect"}, stand_ins("gpu_lost"));
  EXPECT_EQ(lost.exit_code, 5);
  EXPECT_TRUE(contains(lost.err, "GPU 1: problem:")) << lost.err;
  EXPECT_EQ(run_gpuenv({"detect"}, stand_ins("h200")).exit_code, 0);
}

}  // namespace
}  // namespace gpuenv::testing
