#include "sense/python/speed_report.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

namespace gpuenv {
namespace {

TEST(SpeedReport, TheLastCompleteLineThatReads) {
  struct Row {
    const char* what;
    const char* text;
    std::optional<long long> steps;
  } rows[] = {
      {"one line", "steps=12 batches=13 wait=0.5 first_step=10 last_step=21 first_batch=9 last_batch=21\n", 12},
      {"padded as the hook writes it", "steps=3 batches=0 wait=0           \n", 3},
      {"the last line wins", "steps=1 wait=0\nsteps=2 wait=0\n", 2},
      {"an unfinished last line is skipped", "steps=1 wait=0\nsteps=2 wa", 1},
      {"a bad last line falls back", "steps=1 wait=0\nsteps=-2\n", 1},
      {"last before first", "steps=5 first_step=9 last_step=3\n", std::nullopt},
      {"a first without its last", "steps=5 first_step=9\n", std::nullopt},
      {"not a number", "steps=x\n", std::nullopt},
      {"inf", "steps=1 wait=inf\n", std::nullopt},
      {"a fraction of a step", "steps=1.5\n", std::nullopt},
      {"unknown words are skipped", "version=2 steps=4 colour=blue\n", 4},
      {"no figure", "hello\n", std::nullopt},
      {"empty", "", std::nullopt},
  };
  for (const Row& r : rows) {
    auto m = parse_speed_report(r.text);
    ASSERT_EQ(m.has_value(), r.steps.has_value()) << r.what;
    if (m) {
      EXPECT_EQ(m->steps, *r.steps) << r.what;
    }
  }
}

// peak_mem: torch's max_memory_allocated() in bytes, a whole number up to 1 PiB.
TEST(SpeedReport, ThePeakMemoryInRange) {
  struct Row {
    const char* what;
    const char* text;
    bool reads;
    std::optional<std::int64_t> peak;
  } rows[] = {
      {"as the hook writes it", "steps=3 batches=3 wait=0 peak_mem=33285996544 first_step=1 last_step=2\n", true,
       33285996544},
      {"none: CUDA never started", "steps=3 wait=0\n", true, std::nullopt},
      {"zero", "steps=0 peak_mem=0\n", true, 0},
      {"alone", "peak_mem=1024\n", true, 1024},
      {"1 PiB", "steps=1 peak_mem=1125899906842624\n", true, std::int64_t(1) << 50},
      {"over 1 PiB", "steps=1 peak_mem=1125899906842625\n", false, std::nullopt},
      {"negative", "steps=1 peak_mem=-1\n", false, std::nullopt},
      {"a fraction of a byte", "steps=1 peak_mem=1.5\n", false, std::nullopt},
      {"not a number", "steps=1 peak_mem=lots\n", false, std::nullopt},
      {"nan", "steps=1 peak_mem=nan\n", false, std::nullopt},
      {"empty", "steps=1 peak_mem=\n", false, std::nullopt},
      {"too long", "steps=1 peak_mem=00000000000000000000000000000000000000001\n", false, std::nullopt},
      {"a bad peak falls back to the line before", "steps=1 peak_mem=7\nsteps=2 peak_mem=-7\n", true, 7},
  };
  for (const Row& r : rows) {
    auto m = parse_speed_report(r.text);
    ASSERT_EQ(m.has_value(), r.reads) << r.what;
    if (m) {
      EXPECT_EQ(m->peak_mem, r.peak) << r.what;
    }
  }
}

// --tune's report (issue 40): what it applied (tuned=, "" for nothing) and the settings the
// script passed itself (yours=, its values: more workers than gpuenv would suggest read).
TEST(SpeedReport, WhatTuneApplied) {
  auto m = parse_speed_report("steps=3 wait=0 tuned=persistent_workers=True yours=num_workers=48,pin_memory=True\n");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->tuned, "persistent_workers=True");
  EXPECT_EQ(m->yours, "num_workers=48,pin_memory=True");
  m = parse_speed_report("steps=3 wait=0 tuned=\n");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->tuned, "");
  EXPECT_EQ(m->yours, "");
  m = parse_speed_report("steps=3 wait=0\n");
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->tuned);  // no --tune report
  for (const char* bad : {"tuned=num_workers=48", "tuned=batch=4", "yours=num_workers=5000", "yours=pin_memory=x"})
    EXPECT_FALSE(parse_speed_report(std::string("steps=3 ") + bad + "\n")) << bad;
}

TEST(SpeedReport, FiguresFromTheMarks) {
  auto m = parse_speed_report("steps=11 batches=11 wait=2.5 first_step=110 last_step=120 first_batch=109 last_batch=119\n");
  ASSERT_TRUE(m);
  JobSpeed s = job_speed(*m, 100, 125);
  EXPECT_DOUBLE_EQ(*s.steps_per_s, 1.0);  // 10 intervals in 10 s
  EXPECT_DOUBLE_EQ(*s.batches_per_s, 1.0);
  EXPECT_DOUBLE_EQ(*s.data_wait_share, 0.25);
  EXPECT_DOUBLE_EQ(*s.first_step_s, 10);
  EXPECT_DOUBLE_EQ(*s.exit_tail_s, 5);
  JobSpeed one = job_speed(*parse_speed_report("steps=1 first_step=5 last_step=5\n"), 0, 6);
  EXPECT_FALSE(one.steps_per_s);  // one step: no rate
  EXPECT_DOUBLE_EQ(*one.exit_tail_s, 1);
  JobSpeed batches = job_speed(*parse_speed_report("batches=3 first_batch=1 last_batch=3\n"), 0, 4);
  EXPECT_DOUBLE_EQ(*batches.exit_tail_s, 1);  // no step: from the last batch
}

TEST(SpeedReport, TheFileIsReadAndRemoved) {
  std::string path = ::testing::TempDir() + "/speed-report-test";
  std::ofstream(path) << "steps=7 wait=0\n";
  auto m = read_speed_report(path);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->steps, 7);
  EXPECT_FALSE(std::ifstream(path).good());
  EXPECT_FALSE(read_speed_report(path));
}

}  // namespace
}  // namespace gpuenv
