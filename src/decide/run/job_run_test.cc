#include "decide/run/job_run.h"

#include <gtest/gtest.h>

#include <set>

#include "builders.h"

namespace gpuenv {
namespace {

using namespace testing;
using Env = std::map<std::string, std::string>;

Options with(Env env) {
  Options o;
  o.env = std::move(env);
  return o;
}

TEST(JobRun, JobGpus) {
  Machine m = machine::h100(4);
  auto uuid = [&](int i) { return *m.gpus[i].uuid; };
  struct Row {
    std::string description;
    Env env;
    std::vector<std::string> expected;
  };
  std::vector<Row> rows = {
      {"no restriction: every GPU", {}, {uuid(0), uuid(1), uuid(2), uuid(3)}},
      {"CUDA_VISIBLE_DEVICES, in its order", {{"CUDA_VISIBLE_DEVICES", "2,0"}}, {uuid(2), uuid(0)}},
      {"none visible", {{"CUDA_VISIBLE_DEVICES", "-1"}}, {}},
      {"LOCAL_RANK picks its GPU", {{"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "4"}}, {uuid(1)}},
      {"LOCAL_RANK among the visible", {{"CUDA_VISIBLE_DEVICES", "3,2"}, {"LOCAL_RANK", "1"}}, {uuid(2)}},
      {"LOCAL_RANK past the visible: all of them", {{"CUDA_VISIBLE_DEVICES", "3,2"}, {"LOCAL_RANK", "2"}},
       {uuid(3), uuid(2)}},
      {"LOCAL_RANK with one GPU visible: that one", {{"CUDA_VISIBLE_DEVICES", "3"}, {"LOCAL_RANK", "5"}}, {uuid(3)}},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.description);
    EXPECT_EQ(job_gpus(m, with(row.env)), row.expected);
  }
  Machine no_uuid = m;
  no_uuid.gpus[1].uuid.reset();
  EXPECT_EQ(job_gpus(no_uuid, with({})), (std::vector<std::string>{uuid(0), uuid(2), uuid(3)})) << "a GPU without UUID is left out";

  // A MIG device is watched by its own UUID, and CUDA gives a process the first visible one only.
  Machine mig = machine::a100_mig();
  const auto& migs = mig.gpus[0].mig_devices;
  ASSERT_EQ(migs.size(), 3u);
  EXPECT_EQ(job_gpus(mig, with({{"CUDA_VISIBLE_DEVICES", migs[1].uuid}})), std::vector<std::string>{migs[1].uuid});
  EXPECT_EQ(job_gpus(mig, with({{"CUDA_VISIBLE_DEVICES", migs[2].uuid + "," + migs[0].uuid}})),
            std::vector<std::string>{migs[2].uuid});
}

TEST(JobRun, CpusPerGpu) {
  struct Row {
    std::string description;
    std::optional<int> usable_cpus;
    std::vector<int> binding;  // empty: no binding
    Env env;
    std::optional<int> expected;
  };
  std::vector<Row> rows = {
      {"the binding's CPUs", 32, {0, 1, 2, 3}, {{"LOCAL_WORLD_SIZE", "4"}}, 4},
      {"no binding: usable CPUs, one rank", 32, {}, {}, 32},
      {"no binding: shared by the local ranks", 32, {}, {{"LOCAL_RANK", "0"}, {"LOCAL_WORLD_SIZE", "8"}}, 4},
      {"more ranks than CPUs: at least one", 4, {}, {{"LOCAL_RANK", "0"}, {"LOCAL_WORLD_SIZE", "8"}}, 1},
      {"nothing known", std::nullopt, {}, {}, std::nullopt},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.description);
    Machine m = machine::h100(8);
    m.host.usable_cpus = row.usable_cpus;
    Plan plan;
    if (!row.binding.empty()) plan.binding = CpuBinding{row.binding, "test"};
    EXPECT_EQ(cpus_per_gpu(m, plan, with(row.env)), row.expected);
  }
  Machine m = machine::h100(1);
  Plan plan;
  plan.binding = CpuBinding{{}, "empty"};
  EXPECT_EQ(cpus_per_gpu(m, plan, with({})), m.host.usable_cpus) << "an empty binding falls back to the usable CPUs";
}

TEST(JobRun, ScriptOf) {
  const std::set<std::string> files = {"train.py", "./run.sh", "/opt/bin/job", "data.csv"};
  auto is_file = [&](const std::string& p) { return files.count(p) > 0; };
  struct Row {
    std::string description;
    std::vector<std::string> argv;
    std::string expected;
  };
  std::vector<Row> rows = {
      {"python train.py", {"python", "train.py", "--lr", "1"}, "train.py"},
      {"the first file argument", {"python", "-u", "train.py", "data.csv"}, "train.py"},
      {"the program by path", {"./run.sh", "--x"}, "./run.sh"},
      {"an argument before the program", {"/opt/bin/job", "train.py"}, "train.py"},
      {"a bare program name is not a script", {"run.sh"}, ""},
      {"a program by path that is no file", {"/usr/bin/missing"}, ""},
      {"no file at all", {"python", "-c", "print(1)"}, ""},
      {"empty argument skipped", {"python", "", "train.py"}, "train.py"},
      {"empty command", {}, ""},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.description);
    EXPECT_EQ(script_of(row.argv, is_file), row.expected);
  }
  EXPECT_EQ(script_of({"python", ""}, [](const std::string&) { return true; }), "") << "\"\" is never a file";
}

TEST(JobRun, WatchEnabled) {
  struct Row {
    bool no_watch;
    std::string var;
    bool expected;
  };
  for (const auto& row : std::vector<Row>{{false, "", true},
                                          {false, "1", true},
                                          {false, "0", false},
                                          {false, "yes", true},
                                          {true, "", false},
                                          {true, "1", false}}) {
    SCOPED_TRACE("--no-watch " + std::to_string(row.no_watch) + ", GPUENV_WATCH=" + row.var);
    EXPECT_EQ(watch_enabled(row.no_watch, row.var), row.expected);
  }
}

TEST(JobRun, WatchInterval) {
  struct Row {
    std::string value;
    int expected_ms;
  };
  for (const auto& row : std::vector<Row>{{"", 1000},
                                          {"250", 250},
                                          {"50", 50},
                                          {"49", 1000},
                                          {"60000", 60000},
                                          {"60001", 1000},
                                          {"-5", 1000},
                                          {"soon", 1000},
                                          {"200ms", 200}}) {
    SCOPED_TRACE("GPUENV_WATCH_INTERVAL_MS=" + row.value);
    EXPECT_EQ(watch_interval(row.value).count(), row.expected_ms);
  }
}

}  // namespace
}  // namespace gpuenv
