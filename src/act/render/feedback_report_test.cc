#include "act/render/feedback_report.h"

#include <gtest/gtest.h>

namespace gpuenv {
namespace {

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

TEST(FeedbackReport, RefuseHint) {
  EXPECT_EQ(refuse_hint("num_workers"), "refuse: --tune=-num_workers or GPUENV_TUNE_SKIP=num_workers");
}

}  // namespace
}  // namespace gpuenv
