#include "model/job.h"

#include <gtest/gtest.h>

#include "model/job_json.h"

namespace gpuenv {
namespace {

JobSample sample(double t, double util) {
  JobSample s;
  s.t = t;
  s.v[kUtilPct] = util;
  return s;
}

// However long the job, the timeline stays within kMaxTimelinePoints and
// keeps every sample's weight, min and max.
TEST(Timeline, StaysBoundedAndKeepsTotals) {
  Timeline t;
  const int n = 5000;
  for (int i = 0; i < n; ++i) t.add(sample(i, i % 100));
  EXPECT_LE(t.points().size(), kMaxTimelinePoints);
  EXPECT_GE(t.points().size(), kMaxTimelinePoints / 2);
  EXPECT_EQ(t.width(), 8);
  Stat all = t.totals()[kUtilPct];
  EXPECT_EQ(all.n, n);
  EXPECT_EQ(all.min, 0);
  EXPECT_EQ(all.max, 99);
  EXPECT_NEAR(all.mean, 49.5, 1e-9);
  int samples = 0;
  for (const auto& p : t.points()) samples += p.samples;
  EXPECT_EQ(samples, n);
  EXPECT_EQ(t.points().front().t0, 0);
  EXPECT_EQ(t.points().back().t1, n - 1);
  EXPECT_EQ(t.totals()[kMemMib].n, 0);  // never sampled: unknown, not 0
}

TEST(Timeline, RoundTripsThroughJson) {
  Timeline t;
  for (int i = 0; i < 30; ++i) {
    JobSample s = sample(i * 0.5, 10 * (i % 7));
    if (i % 2) s.v[kMemMib] = 1024.0 * i;
    s.clock_events = i % 3 ? 0x4 : 0;
    t.add(s);
  }
  Timeline back;
  std::string err;
  ASSERT_TRUE(timeline_from_json(timeline_to_json(t), &back, &err)) << err;
  EXPECT_EQ(back.points(), t.points());
  EXPECT_EQ(back.width(), t.width());
}

TEST(Timeline, BadJsonNamesThePlace) {
  Timeline t;
  std::string err;
  EXPECT_FALSE(timeline_from_json(nlohmann::json::parse(R"({"points":[{"t0":0,"t1":0,"samples":1,"util_pct":[1,2]}]})"),
                                  &t, &err));
  EXPECT_EQ(err, "timeline.points[0].util_pct: expected [min, mean, max, n]");
  EXPECT_FALSE(timeline_from_json(nlohmann::json::parse(R"({"points":[{"t0":0,"samples":1}]})"), &t, &err));
  EXPECT_NE(err.find("timeline.points[0]"), std::string::npos);
  EXPECT_FALSE(timeline_from_json(nlohmann::json::parse(R"({"points":[{"t0":1e300,"t1":0,"samples":1e30}]})"), &t, &err));
  EXPECT_NE(err.find("out of range"), std::string::npos) << err;
}

// issue 21, 20: a stored timeline is input. Sample counts near INT_MAX summed
// past it in the verdict ("ran for -727379968 samples").
TEST(Timeline, StoredSampleCountsStayWithinAnInt) {
  using nlohmann::json;
  json point = {{"t0", 0}, {"t1", 1}, {"samples", kMaxPointSamples}, {"util_pct", {1, 2, 3, kMaxPointSamples}}};
  json full = {{"points", json::array()}};
  for (std::size_t i = 0; i < kMaxTimelinePoints; ++i) full["points"].push_back(point);
  Timeline t;
  std::string err;
  ASSERT_TRUE(timeline_from_json(full, &t, &err)) << err;
  long long total = 0;
  for (const auto& p : t.points()) total += p.samples;
  EXPECT_LE(total, 2147483647LL);
  EXPECT_EQ(t.totals()[kUtilPct].n, int(total));
  point["samples"] = 2147483647;
  EXPECT_FALSE(timeline_from_json({{"points", {point}}}, &t, &err));
  EXPECT_EQ(err, "timeline.points[0].samples: out of range (1 to 2147483)") << err;
  point["samples"] = 1, point["util_pct"] = {1, 2, 3, 2147483647};
  EXPECT_FALSE(timeline_from_json({{"points", {point}}}, &t, &err));
  EXPECT_NE(err.find("util_pct: n must be 1 to 2147483"), std::string::npos) << err;
  EXPECT_FALSE(timeline_from_json({{"width", -5}, {"points", json::array()}}, &t, &err));
}

TEST(JobContext, StoredCapacitiesAreRangeChecked) {
  using nlohmann::json;
  JobContext c;
  std::string err;
  EXPECT_FALSE(context_from_json({{"gpus", {{{"uuid", "GPU-a"}, {"memory_total_mib", 1e308}}}}}, &c, &err));
  EXPECT_EQ(err, "context.gpus[0].memory_total_mib: out of range (0 to 1000000000)");
  EXPECT_FALSE(context_from_json({{"cpus_per_gpu", -2147483648.0}}, &c, &err));
  EXPECT_NE(err.find("context.cpus_per_gpu: out of range"), std::string::npos) << err;
  EXPECT_FALSE(context_from_json({{"interval_s", 0}}, &c, &err));
  EXPECT_NE(err.find("context.interval_s: out of range"), std::string::npos) << err;
  EXPECT_FALSE(context_from_json({{"gemm_tflops", {{"fp32", -1}}}}, &c, &err));
  EXPECT_EQ(err, "context.gemm_tflops.fp32: out of range (0 to 1000000000)");
  EXPECT_FALSE(context_from_json({{"gemm_tflops", {{"fp32", "fast"}}}}, &c, &err));
  EXPECT_FALSE(context_from_json({{"gemm_tflops", 3}}, &c, &err));
  EXPECT_EQ(err, "context.gemm_tflops: expected an object");
}

// Jobs stored before the GPM metrics and the bench figures still load.
TEST(JobContext, AnOlderRecordLoadsWithoutGpmOrBenchFigures) {
  using nlohmann::json;
  JobContext c;
  Timeline t;
  std::string err;
  ASSERT_TRUE(context_from_json({{"gpus", json::array()}, {"interval_s", 1}}, &c, &err)) << err;
  EXPECT_TRUE(c.gemm_tflops.empty());
  json point = {{"t0", 0}, {"t1", 0}, {"samples", 1}, {"util_pct", {99, 99, 99, 1}}};
  ASSERT_TRUE(timeline_from_json({{"width", 1}, {"points", {point}}}, &t, &err)) << err;
  EXPECT_EQ(t.points()[0].s[kSmActivePct].n, 0);
  EXPECT_EQ(t.points()[0].s[kUtilPct].n, 1);
  EXPECT_STREQ(metric_name(kSmOccupancyPct), "sm_occupancy_pct");
}

TEST(JobContext, RoundTripsThroughJson) {
  JobContext c;
  c.gpus.push_back({"GPU-a", "NVIDIA H200", 143771.0, 5, 16, 1980.0, 700.0});
  c.gpus.push_back({"GPU-b", std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt});
  c.cpus_per_gpu = 12;
  c.interval_s = 0.5;
  c.unwatched = "";
  c.gemm_tflops = {{"fp32", 47.0}, {"tf32", 355.2}, {"bf16", 703.4}};
  JobContext back;
  std::string err;
  ASSERT_TRUE(context_from_json(context_to_json(c), &back, &err)) << err;
  EXPECT_EQ(back, c);
  c.precision = "bf16";  // issue 25: the record says the job ran with --tune=+precision
  c.bf16 = true;
  c.bf16_gain = 2.1;
  c.bf16_gain_basis = "gemm_bf16_8192 over gemm_tf32_8192 (2.1x), measured 2026-12-02";
  ASSERT_TRUE(context_from_json(context_to_json(c), &back, &err)) << err;
  EXPECT_EQ(back, c);
}

TEST(JobContext, PrecisionFieldsAreOptionalAndChecked) {
  using nlohmann::json;
  JobContext c;
  std::string err;
  ASSERT_TRUE(context_from_json({{"interval_s", 1}}, &c, &err)) << err;  // a record from before them
  EXPECT_EQ(c.precision, "");
  EXPECT_FALSE(c.bf16);
  EXPECT_FALSE(context_from_json({{"bf16", "yes"}}, &c, &err));
  EXPECT_EQ(err, "context.bf16: expected true or false");
  EXPECT_FALSE(context_from_json({{"bf16_gain", {{"factor", -1}}}}, &c, &err));
  EXPECT_NE(err.find("context.bf16_gain.factor: out of range"), std::string::npos) << err;
}

}  // namespace
}  // namespace gpuenv
