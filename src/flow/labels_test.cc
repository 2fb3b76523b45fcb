// The labels sequence end to end with fakes: a machine that changes between
// rounds, a clock, a stop that comes after the rounds a test asks for (no
// sleeping), the real atomic writer into the test's own directory, or a
// writer that fails.
#include "flow/labels.h"

#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <sstream>

#include "builders.h"
#include "container_support.h"
#include "model/exit_codes.h"
#include "text_files.h"

namespace gpuenv::flow {
namespace {

namespace machine = gpuenv::testing::machine;

// 2026-01-01T00:00:00Z: the labels expire three intervals later.
constexpr std::time_t kNow = 1767225600;

using testing::slurp;

// Stops once `rounds` waits have come; every wait calls `between` first, so
// a test sees the file as each round left it.
class CountedStop : public StopWait {
 public:
  explicit CountedStop(int rounds) : rounds_(rounds) {}
  void hold() override { ++holds; }
  bool wait(int seconds) override {
    waited_s.push_back(seconds);
    if (between) between();
    return int(waited_s.size()) >= rounds_;
  }
  int holds = 0;
  std::vector<int> waited_s;
  std::function<void()> between;

 private:
  int rounds_;
};

// A stop that must never be waited on: --once and --json make one round.
class NoStop : public StopWait {
 public:
  void hold() override { ADD_FAILURE() << "held a stop for one round"; }
  bool wait(int) override { return ADD_FAILURE() << "waited after one round", true; }
};

struct LabelsSaid {
  Severity level;
  std::string event, text;
};

// The fakes: the machines each round senses in turn (the last one again
// after them), the fixed clock, every line said; the test's directory holds
// features.d.
struct LabelsFakes {
  testing::ScratchDir dir;
  std::vector<Machine> machines = {machine::h100(1)};
  bool sensed = true;
  int senses = 0;
  std::vector<LabelsSaid> said;
  LabelsEnv env(StopWait* stop) {
    LabelsEnv e;
    e.stop = stop;
    e.sense = [this](Machine* m, Options*) {
      *m = machines[std::min<std::size_t>(senses++, machines.size() - 1)];
      return sensed;
    };
    e.clock = [] { return kNow; };
    e.log = [this](Severity level, const std::string& event, const std::string& text, nlohmann::ordered_json) {
      said.push_back({level, event, text});
    };
    return e;
  }
  LabelsRequest request() {
    LabelsRequest r;
    r.features_dir = dir.path() + "/features.d";
    r.output = r.features_dir + "/gpuenv";
    r.interval_s = 30;
    return r;
  }
  std::optional<LabelsSaid> find(const std::string& event) const {
    for (const LabelsSaid& s : said)
      if (s.event == event) return s;
    return std::nullopt;
  }
};

bool has_file_line(const std::string& file, const std::string& line) {
  return file.find("\n" + line + "\n") != std::string::npos;
}

TEST(LabelsFlow, EachRoundRewritesTheFileWithWhatItSensed) {
  LabelsFakes f;
  f.machines = {machine::h100(1), machine::h100(2)};
  CountedStop stop(2);
  std::vector<std::string> files;
  LabelsRequest req = f.request();
  stop.between = [&] { files.push_back(slurp(req.output)); };
  EXPECT_EQ(run_labels(req, f.env(&stop)), kExitOk);
  EXPECT_EQ(stop.holds, 1);
  EXPECT_EQ(stop.waited_s, (std::vector<int>{30, 30}));
  ASSERT_EQ(files.size(), 2u);
  EXPECT_TRUE(has_file_line(files[0], "gpuenv.dev/gpu.count=1")) << files[0];
  EXPECT_TRUE(has_file_line(files[1], "gpuenv.dev/gpu.count=2")) << files[1];
  EXPECT_NE(files[1].find("\ngpuenv.dev/doctor="), std::string::npos) << files[1];  // doctor's verdict
  EXPECT_TRUE(has_file_line(files[1], "# +expiry-time=2026-01-01T00:01:30Z")) << files[1];
}

TEST(LabelsFlow, OnceWritesOneRoundAndWaitsForNothing) {
  LabelsFakes f;
  NoStop stop;
  LabelsRequest req = f.request();
  req.once = true;
  EXPECT_EQ(run_labels(req, f.env(&stop)), kExitOk);
  EXPECT_EQ(f.senses, 1);
  EXPECT_TRUE(has_file_line(slurp(req.output), "gpuenv.dev/gpu.count=1"));
}

// NVML 18: the driver was upgraded without a reboot, and nvmlInit fails
// before any GPU is read; the GPUs are there, so no count of 0 is published.
TEST(LabelsFlow, UnreadableGpusPublishNoGpuLabels) {
  LabelsFakes f;
  Machine m;
  m.nvidia.problems.push_back({"nvml", "nvml_version_mismatch", "nvmlInit_v2 failed: Driver/library version mismatch",
                               "reboot, or reload the nvidia kernel modules"});
  f.machines = {m};
  NoStop stop;
  LabelsRequest req = f.request();
  req.once = true;
  EXPECT_EQ(run_labels(req, f.env(&stop)), kExitOk);
  std::string file = slurp(req.output);
  EXPECT_EQ(file.find("gpuenv.dev/gpu."), std::string::npos) << file;
  EXPECT_EQ(file.find("gpuenv.dev/driver."), std::string::npos) << file;
  EXPECT_NE(file.find("\ngpuenv.dev/doctor="), std::string::npos) << file;  // doctor's verdict still
}

TEST(LabelsFlow, AFailedWriteIsSaidAndTriedAgainNextRound) {
  LabelsFakes f;
  CountedStop stop(3);
  LabelsEnv env = f.env(&stop);
  int writes = 0;
  env.write = [&](const std::string& path, const std::string&, mode_t mode, std::string* err) {
    ++writes;
    EXPECT_EQ(mode, 0644u);
    *err = "cannot write " + path + ": read-only file system";
    return false;
  };
  LabelsRequest req = f.request();
  req.output_given = true;
  EXPECT_EQ(run_labels(req, env), kExitOk);
  EXPECT_EQ(writes, 3);
  std::optional<LabelsSaid> said = f.find("write failed");
  ASSERT_TRUE(said);
  EXPECT_EQ(said->level, Severity::kError);
  EXPECT_EQ(said->text, "labels: cannot write " + req.output + ": read-only file system");

  req.once = true;  // once, the failure is the exit status
  NoStop none;
  env.stop = &none;
  EXPECT_EQ(run_labels(req, env), kExitFailure);
}

TEST(LabelsFlow, AnUnreadableMachineEndsTheRounds) {
  LabelsFakes f;
  f.sensed = false;
  CountedStop stop(5);
  EXPECT_EQ(run_labels(f.request(), f.env(&stop)), kExitBadInput);
  EXPECT_EQ(f.senses, 1);
  EXPECT_TRUE(stop.waited_s.empty());
}

// Without --output, features.d's parent must exist: this is no NFD node.
TEST(LabelsFlow, NoFeaturesParentEndsTheRoundsWithoutWriting) {
  LabelsFakes f;
  CountedStop stop(5);
  LabelsRequest req = f.request();
  req.features_dir = f.dir.path() + "/missing/features.d";
  req.output = req.features_dir + "/gpuenv";
  EXPECT_EQ(run_labels(req, f.env(&stop)), kExitFailure);
  EXPECT_TRUE(stop.waited_s.empty());
  std::optional<LabelsSaid> said = f.find("no features.d");
  ASSERT_TRUE(said);
  EXPECT_NE(said->text.find(f.dir.path() + "/missing does not exist"), std::string::npos) << said->text;
}

// With GFD's own file beside it, nvidia.com/ is left to GFD, said once.
TEST(LabelsFlow, GfdsFileKeepsTheNvidiaLabels) {
  LabelsFakes f;
  CountedStop stop(2);
  LabelsRequest req = f.request();
  req.ns = kNvidiaNamespace;
  req.once = true;  // without GFD's file, gpuenv writes them
  NoStop none;
  EXPECT_EQ(run_labels(req, f.env(&none)), kExitOk);
  EXPECT_TRUE(has_file_line(slurp(req.output), "nvidia.com/gpu.count=1")) << slurp(req.output);
  req.once = false;
  f.dir.file("features.d/gfd", "nvidia.com/gpu.count=1\n");
  EXPECT_EQ(run_labels(req, f.env(&stop)), kExitOk);
  std::string file = slurp(req.output);
  EXPECT_EQ(file.find("nvidia.com/"), std::string::npos) << file;
  int yields = 0;
  for (const LabelsSaid& s : f.said) yields += s.event == "gfd present";
  EXPECT_EQ(yields, 1);
}

}  // namespace
}  // namespace gpuenv::flow
