#include "act/render/feedback_report.h"

#include <gtest/gtest.h>

#include "act/render/report.h"
#include "job_builders.h"
#include "decide/verdict.h"

namespace gpuenv {
namespace {

using nlohmann::json;

// Job 3, input-bound (tests/job_builders.h).
Job input_bound_job() {
  Job j = testing::input_bound_job({"python3", "loaders.py"}, "/work/project");
  j.id = 3;
  return j;
}

TEST(FeedbackReport, NoJobStored) {
  EXPECT_EQ(render_feedback(std::nullopt, true, std::nullopt, TuneChoice{}),
            "\nFeedback: this command has not run under gpuenv run here yet.\n");
  EXPECT_EQ(render_feedback(std::nullopt, false, std::nullopt, TuneChoice{}), "") << "no command named: nothing";
}

TEST(FeedbackReport, JobWithProfile) {
  Job job;
  job.id = 7;
  job.argv = {"python", "train.py"};
  job.started_at = "2026-12-02T06:00:00Z";
  TuneProfile p;
  p.kept = "num_workers=8";
  p.settled = true;
  p.note = "kept num_workers=8";
  std::string out = render_feedback(job, true, p, TuneChoice{});
  EXPECT_EQ(out.rfind("\nFeedback from job 7 (python train.py, 2026-12-02T06:00:00Z):\n", 0), 0u) << out;
  EXPECT_NE(out.find("  tuning profile: plain runs apply num_workers=8; the next --tune applies nothing "
                     "(the search has stopped)\n    last: kept num_workers=8\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("gpuenv run --tune"), std::string::npos) << "a profile replaces the --tune lines";
}

// The JSON face (explain --json's "feedback") says what the text says, as
// data; the text face is render_feedback's.
TEST(FeedbackReport, JsonFaceWithNoJob) {
  Feedback f;
  EXPECT_EQ(report_json(f), json(nullptr)) << "no command named, no job: the text is empty, the JSON null";
  EXPECT_EQ(report_text(f, {}), "");
  f.asked = true;
  EXPECT_EQ(report_json(f), (json{{"command_asked", true}, {"last_job", nullptr}, {"tuning_profile", nullptr},
                                  {"tune_would_change", nullptr}}));
  EXPECT_EQ(report_text(f, {}), render_feedback(std::nullopt, true, std::nullopt, TuneChoice{}));
}

TEST(FeedbackReport, JsonFaceWithAStoredJob) {
  Feedback f;
  f.last = input_bound_job();
  f.asked = true;
  f.choice.refused = {"pin_memory"};
  json j = report_json(f);
  EXPECT_EQ(j["command_asked"], true);
  // The job as `gpuenv report --json 3` prints it: its timeline and every verdict.
  EXPECT_EQ(j["last_job"], job_report_json(*f.last, verdicts_of(*f.last)));
  EXPECT_EQ(j["last_job"]["id"], 3);
  EXPECT_EQ(j["last_job"]["verdict"]["name"], "input-bound") << j;
  EXPECT_TRUE(j["tuning_profile"].is_null());
  EXPECT_EQ(j["tune_would_change"], (json{{{"name", "num_workers"}, {"value", "15"}, {"refused", false}},
                                          {{"name", "pin_memory"}, {"value", "True"}, {"refused", true}},
                                          {{"name", "persistent_workers"}, {"value", "True"}, {"refused", false}}}))
      << j["tune_would_change"];
  std::string text = report_text(f, {});
  EXPECT_EQ(text, render_feedback(f.last, true, std::nullopt, f.choice));
  EXPECT_NE(text.find("    num_workers=15  (refuse: "), std::string::npos) << text;
  EXPECT_NE(text.find("    pin_memory=True  (refused)\n"), std::string::npos) << text;
  // A verdict with nothing to tune: an empty list, as the text's "would change nothing".
  Feedback idle;
  idle.last = input_bound_job();
  idle.last->verdict = JobVerdict{"busy", "busy 95%", "none"};
  idle.last->timeline = Timeline{};
  EXPECT_EQ(report_json(idle)["tune_would_change"], json::array());
  EXPECT_EQ(report_json(idle)["command_asked"], false) << "the newest job, no command named";
  EXPECT_NE(report_text(idle, {}).find("gpuenv run --tune would change nothing."), std::string::npos)
      << report_text(idle, {});
}

TEST(FeedbackReport, JsonFaceWithAProfile) {
  Feedback f;
  f.last = input_bound_job();
  f.asked = true;
  TuneProfile p;
  p.command_fp = "fp";
  p.kept = "num_workers=8";
  p.next = "num_workers=8";
  p.settled = true;
  p.note = "kept num_workers=8";
  f.profile = p;
  json j = report_json(f);
  EXPECT_EQ(j["tuning_profile"], profile_to_json(p));
  EXPECT_EQ(j["tuning_profile"]["kept"], "num_workers=8") << j["tuning_profile"];
  EXPECT_TRUE(j["tune_would_change"].is_null()) << "a profile replaces the --tune lines, in both faces";
  EXPECT_EQ(report_text(f, {}), render_feedback(f.last, true, p, TuneChoice{}));
}

// explain's report: the feedback follows the plan in the text, and is the
// plan JSON's last key, the plan's keys and order unchanged.
TEST(FeedbackReport, ExplainCarriesIt) {
  Plan plan;
  Feedback f;
  f.last = input_bound_job();
  f.asked = true;
  std::string text = format_report(ExplainReport{plan, 0, &f}, Format::kText, {});
  EXPECT_EQ(text, format_report(ExplainReport{plan}, Format::kText, {}) + report_text(f, {}));
  nlohmann::ordered_json with = report_json(ExplainReport{plan, 0, &f});
  nlohmann::ordered_json without = report_json(ExplainReport{plan});
  EXPECT_FALSE(without.contains("feedback")) << "no feedback given: no key";
  ASSERT_EQ(with.size(), without.size() + 1);
  EXPECT_EQ(with.back(), nlohmann::ordered_json(report_json(f)));
  with.erase("feedback");
  EXPECT_EQ(with.dump(), without.dump()) << "the plan's keys, in their order";
  Feedback none;
  EXPECT_TRUE(report_json(ExplainReport{plan, 0, &none})["feedback"].is_null());
}

TEST(FeedbackReport, RefuseHint) {
  EXPECT_EQ(refuse_hint("num_workers"), "refuse: --tune=-num_workers or GPUENV_TUNE_SKIP=num_workers");
}

}  // namespace
}  // namespace gpuenv
