// explain's feedback read from a real store in a temp dir: the command's
// last job, with what `gpuenv report ID` shows it with (its command's first
// run, its memory plan), its tuning profile, and --tune's refusals.
#include "flow/command_history.h"

#include <gtest/gtest.h>

#include "process.h"

namespace gpuenv::flow {
namespace {

const std::vector<std::string> kCommand = {"python3", "train.py"};

struct Stored {
  std::string store = gpuenv::testing::make_temp_dir("gpuenv-flow-history") + "/gpuenv.db";

  // A job of `argv` run here at `at`, with a measured speed.
  std::int64_t add_job(const std::vector<std::string>& argv, const std::string& at, double steps_per_s) {
    std::string err;
    auto db = store::Store::open(store, &err);
    EXPECT_TRUE(db) << err;
    Job j;
    j.argv = argv;
    j.command_fp = command_fingerprint_here(argv);
    j.started_at = at;
    j.plan_json = "{}";
    j.context.gpus.push_back({"GPU-a", "NVIDIA H200", 143771.0, 5, 16, 1980.0, 700.0});
    j.speed = JobSpeed{};
    j.speed->steps_per_s = steps_per_s;
    std::int64_t id = 0;
    EXPECT_TRUE(db && db->add_job(j, &id, &err)) << err;
    return id;
  }
  template <typename F>
  void with_db(F f) {
    std::string err;
    auto db = store::Store::open(store, &err);
    ASSERT_TRUE(db) << err;
    f(db.get());
  }
};

TEST(ReadFeedback, TheCommandsLastJobWithWhatReportShowsItWith) {
  Stored s;
  ASSERT_EQ(s.add_job(kCommand, "2025-01-01T00:00:00Z", 2.0), 1);
  ASSERT_EQ(s.add_job({"python3", "other.py"}, "2025-01-01T00:01:00Z", 1.0), 2);
  s.with_db([](store::Store* db) {
    std::string err;
    PlannedPeak plan{command_fingerprint_here(kCommand), 3e10, "NVIDIA H200", "--batch 8", "2025-01-01T00:01:30Z"};
    ASSERT_TRUE(db->add_planned_peak(plan, &err)) << err;
  });
  ASSERT_EQ(s.add_job(kCommand, "2025-01-01T00:02:00Z", 4.0), 3);

  Feedback f = read_feedback(s.store, std::nullopt, kCommand, {});
  EXPECT_TRUE(f.asked);
  ASSERT_TRUE(f.last);
  EXPECT_EQ(f.last->id, 3) << "the command's newest job, not the other command's";
  EXPECT_FALSE(f.profile);
  ASSERT_EQ(f.firsts.count(f.last->command_fp), 1u);
  EXPECT_EQ(f.firsts.at(f.last->command_fp).id, 1) << "the first run: report's speed-up";
  ASSERT_EQ(f.plans.count(3), 1u);
  EXPECT_EQ(f.plans.at(3).flags, "--batch 8");
  nlohmann::json j = report_json(f);
  EXPECT_EQ(j["last_job"]["speedup"], 2.0) << j["last_job"];
  EXPECT_EQ(j["last_job"]["planned_peak_bytes"], 3e10);

  // No command named: the newest watched job of any command.
  f = read_feedback(s.store, std::nullopt, {}, {});
  EXPECT_FALSE(f.asked);
  ASSERT_TRUE(f.last);
  EXPECT_EQ(f.last->id, 3);
}

TEST(ReadFeedback, NoJobOrNoStore) {
  Stored s;
  Feedback f = read_feedback(s.store, std::nullopt, kCommand, {});
  EXPECT_TRUE(f.asked);
  EXPECT_FALSE(f.last) << "no store: nothing read, none created";
  s.add_job({"python3", "other.py"}, "2025-01-01T00:00:00Z", 1.0);
  f = read_feedback(s.store, std::nullopt, kCommand, {});
  EXPECT_FALSE(f.last);
  EXPECT_EQ(report_text(f, {}), "\nFeedback: this command has not run under gpuenv run here yet.\n");
  EXPECT_TRUE(report_json(f)["last_job"].is_null());
}

TEST(ReadFeedback, TheProfileAndTheRefusals) {
  Stored s;
  s.add_job(kCommand, "2025-01-01T00:00:00Z", 2.0);
  TuneProfile p;
  p.command_fp = command_fingerprint_here(kCommand);
  p.kept = "num_workers=8";
  s.with_db([&](store::Store* db) {
    std::string err;
    ASSERT_TRUE(db->put_profile(p, "2025-01-01T00:05:00Z", &err)) << err;
  });
  Feedback f = read_feedback(s.store, "-num_workers", kCommand, {});
  ASSERT_TRUE(f.profile);
  EXPECT_EQ(f.profile->kept, "num_workers=8");
  EXPECT_EQ(report_json(f)["tuning_profile"]["kept"], "num_workers=8");
  EXPECT_TRUE(f.choice.refused.count("num_workers")) << "--tune=-num_workers";
}

}  // namespace
}  // namespace gpuenv::flow
