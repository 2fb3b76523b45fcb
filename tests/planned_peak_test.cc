// Issue 40, 4, end to end: `gpuenv plan-memory FLAGS [--] CMD` keeps the plan
// for CMD, `gpuenv run -- CMD` records the job's measured peak (torch's from
// the hook, else NVML's), and `gpuenv report` shows one against the other.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "nvml_trace_job.h"
#include "process.h"
#include "report_json.h"
#include "test_paths.h"

namespace gpuenv::testing {
namespace {

using nlohmann::json;

const std::string kH200File = (test_paths::tests_dir() + "/machines/h200.json");
const std::string kHook = (test_paths::tests_dir() + "/tune_hook");
constexpr double kGiB = 1024.0 * 1024 * 1024;

// GPT-2 small, batch 8 of 1024 tokens.
const std::vector<std::string> kPlanFlags = {"--machine", kH200File,   "--arch",  "gpt2",  "--hidden", "768",
                                             "--layers",  "12",    "--heads", "12",    "--vocab",  "50257",
                                             "--seq",     "1024",  "--batch", "8"};

// A job that lasts until the stand-in NVML has listed its processes 3 times
// more ($FAKE_NVML_TRACE; at most 30 s): its 8 GiB (h200_job) is then sampled
// however loaded the machine. `before` runs first (the stand-in torch's CUDA).
std::vector<std::string> job(const std::string& before = "") {
  return {"/usr/bin/python3", "-c", until_nvml_calls("nvmlDeviceGetComputeRunningProcesses", 3, before)};
}

ProcessOptions watched(const std::string& root) {
  ProcessOptions o = stand_ins("h200_job");
  o.env["GPUENV_WATCH_INTERVAL_MS"] = "100";
  o.env["GPUENV_CACHE_ROOT"] = root;
  o.env["GPUENV_WATCH"] = "1";
  o.env["FAKE_NVML_TRACE"] = root + "/nvml-trace";
  return o;
}

std::vector<std::string> then(std::vector<std::string> args, const std::vector<std::string>& cmd) {
  args.push_back("--");
  args.insert(args.end(), cmd.begin(), cmd.end());
  return args;
}

std::vector<std::string> plan_memory(const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"plan-memory"};
  args.insert(args.end(), kPlanFlags.begin(), kPlanFlags.end());
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(PlannedPeak, PlanMemoryKeepsThePlanForTheCommandAndReportComparesIt) {
  std::string root = make_temp_dir("gpuenv-planned-peak");
  ProcessOptions o = watched(root);
  std::vector<std::string> cmd = job();
  // Without `-- CMD` nothing is kept: not even the store is made.
  ProcessResult r = run_gpuenv(plan_memory({"--json"}), o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  double planned = json::parse(r.out)["peak_bytes_per_gpu"];
  EXPECT_EQ(r.err.find("recorded"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(root + "/gpuenv.db"));
  // With it: the plan on stdout as before (JSON alone), one line on stderr.
  r = run_gpuenv(then(plan_memory({"--json"}), cmd), o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["peak_bytes_per_gpu"], planned);
  char gib[32];
  std::snprintf(gib, sizeof gib, "%.1f GiB", planned / kGiB);
  EXPECT_NE(r.err.find(std::string("gpuenv: recorded the planned peak, ") + gib + " per GPU, for `/usr/bin/python3 -c"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("`gpuenv report` compares it with the peak `gpuenv run -- /usr/bin/python3 -c"),
            std::string::npos) << r.err;
  // The job of that command; then one of another command, which no plan names.
  r = run_gpuenv(then({"run"}, cmd), o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> other = job("pass\n");
  r = run_gpuenv(then({"run"}, other), o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json one = report_json({"1"}, o);
  ASSERT_TRUE(one.is_object());
  EXPECT_EQ(one["peak_memory_bytes"], 8589934592);  // the scenario's job_mem: no torch here
  EXPECT_EQ(one["peak_memory_source"], "nvml");
  EXPECT_EQ(one["planned_peak_bytes"], planned);
  EXPECT_TRUE(one["planned_peak_bytes"].is_number_unsigned()) << "whole bytes, as plan-memory --json prints them";
  EXPECT_NEAR(one["plan_error_pct"].get<double>(), 100 * (8589934592 - planned) / planned, 1e-9);
  EXPECT_EQ(one["memory_plan"]["gpu"], "NVIDIA H200");
  EXPECT_EQ(one["memory_plan"]["flags"], "--arch gpt2 --hidden 768 --layers 12 --heads 12 --vocab 50257 --seq 1024 "
                                         "--batch 8 --machine " + kH200File);
  json two = report_json({"2"}, o);
  EXPECT_EQ(two["peak_memory_source"], "nvml");
  EXPECT_TRUE(two["planned_peak_bytes"].is_null()) << two["planned_peak_bytes"];
  EXPECT_TRUE(two["plan_error_pct"].is_null());
  json list = report_json({}, o);
  ASSERT_EQ(list["jobs"].size(), 2u);
  EXPECT_EQ(list["jobs"][1]["plan_error_pct"], one["plan_error_pct"]);
  r = run_gpuenv({"report", "1"}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  double pct = one["plan_error_pct"];
  char line[160];
  std::snprintf(line, sizeof line, "  peak memory 8.0 GiB (nvml), planned %s for NVIDIA H200: measured %s%.1f %% %s the plan",
                gib, pct > 0 ? "+" : "", std::abs(pct), pct > 0 ? "over" : "under");
  EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
}

// The hook's figure (torch.cuda.max_memory_allocated(), the stand-in torch's 5 GiB) wins over
// NVML's 8 GiB of the same job.
TEST(PlannedPeak, TorchsPeakFromTheHookWinsOverNvmls) {
  std::string root = make_temp_dir("gpuenv-planned-peak");
  ProcessOptions o = watched(root);
  o.env["GPUENV_PYTHON_DIR"] = test_paths::tests_dir() + "/../python";
  o.env["PYTHONPATH"] = kHook;  // the stand-in torch
  std::vector<std::string> cmd = job("import torch\ntorch.cuda.init()\ntorch.cuda.PEAK[0] = 5 * 2**30\n"
                                     "torch.optim.Optimizer().step()\n");
  ProcessResult r = run_gpuenv(then({"run"}, cmd), o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json one = report_json({"1"}, o);
  EXPECT_EQ(one["peak_memory_bytes"], 5 * 1073741824LL);
  EXPECT_EQ(one["peak_memory_source"], "torch");
  EXPECT_TRUE(one["planned_peak_bytes"].is_null());
  r = run_gpuenv({"report", "1"}, o);
  EXPECT_NE(r.out.find("\n  peak memory 5.0 GiB (torch)\n"), std::string::npos) << r.out;
}

// The command without `--`, read as gpuenv run reads it: from its first word
// on, every word is the command's, flags plan-memory also has included.
TEST(PlannedPeak, TheCommandStartsAtItsFirstWordAsInRun) {
  std::string root = make_temp_dir("gpuenv-planned-peak");
  std::vector<std::string> args = plan_memory({"--db", root + "/jobs.db"});
  for (const char* w : {"python3", "train.py", "--batch", "99", "--json"}) args.push_back(w);
  ProcessResult r = run_gpuenv(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("batch 8 x seq 1024"), std::string::npos) << "plan-memory's --batch, not the command's\n" << r.out;
  EXPECT_FALSE(json::accept(r.out)) << "the command's --json is not plan-memory's";
  EXPECT_NE(r.err.find("per GPU, for `python3 train.py --batch 99 --json` in this directory"), std::string::npos)
      << r.err;
  EXPECT_TRUE(std::filesystem::exists(root + "/jobs.db"));
}

// A store that cannot be written: the plan is printed, and exit 1 says it was not kept.
TEST(PlannedPeak, AStoreThatCannotBeWrittenExits1) {
  std::string root = make_temp_dir("gpuenv-planned-peak");
  std::string file = root + "/not-a-dir";
  FILE* f = std::fopen(file.c_str(), "w");
  ASSERT_TRUE(f);
  std::fclose(f);
  ProcessResult r = run_gpuenv(then(plan_memory({"--db", file + "/gpuenv.db"}), {"python3", "train.py"}));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("GiB"), std::string::npos) << r.out;  // the plan itself
  EXPECT_NE(r.err.find("gpuenv: plan-memory: the plan was not recorded for python3 train.py: "), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace gpuenv::testing
