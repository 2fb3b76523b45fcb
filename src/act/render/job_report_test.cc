#include "act/render/job_report.h"

#include <gtest/gtest.h>

#include "act/render/printable.h"

namespace gpuenv {
namespace {

Job sample_job() {
  Job j;
  j.id = 7;
  j.argv = {"python3", "train.py", "--name", "a <b> & c"};
  j.cwd = "/w";
  j.started_at = "2025-01-01T00:00:00Z";
  j.duration_s = 125;
  j.context.gpus.push_back({"GPU-a", "NVIDIA H200", 143771.0, 5, 16, 1980.0, 700.0});
  for (int i = 0; i < 120; ++i) {
    JobSample s;
    s.t = i;
    s.v[kUtilPct] = i < 60 ? 10 : 90;
    s.v[kMemMib] = 20480;
    s.v[kTopCpuCores] = 1.0;
    j.timeline.add(s);
  }
  return j;
}

TEST(JobReport, Sparklines) {
  std::vector<std::optional<double>> v = {0, 50, 100, std::nullopt};
  EXPECT_EQ(sparkline(v, 100, 60, false), "_+@ ");
  EXPECT_EQ(sparkline(v, 100, 60, true), "\u2581\u2585\u2588 ");
  EXPECT_EQ(sparkline(v, 100, 2, false).size(), 2u);  // averaged into 2 columns
  EXPECT_EQ(sparkline({}, 100, 60, true), "");
}

TEST(JobReport, OneJobShowsVerdictAndBothLines) {
  Job j = sample_job();
  std::string out = render_job(j, judge(j.context, j.timeline), false);
  EXPECT_NE(out.find("Job 7: python3 train.py --name 'a <b> & c'"), std::string::npos) << out;
  EXPECT_NE(out.find("ran 2 min 05 s, exit 0"), std::string::npos) << out;
  EXPECT_NE(out.find("Verdict: "), std::string::npos) << out;
  EXPECT_NE(out.find("utilisation ______"), std::string::npos) << out;  // ASCII: the first half low
  EXPECT_NE(out.find("peak 20.0 of 140.4 GiB"), std::string::npos) << out;
  EXPECT_EQ(out.find("\u2581"), std::string::npos);  // no Unicode without UTF-8
  EXPECT_EQ(out.find("tuned:"), std::string::npos);
  j.context.precision = "bf16";  // issue 25: the report says the job ran with precision tuning
  out = render_job(j, judge(j.context, j.timeline), false);
  EXPECT_NE(out.find("  tuned: bf16 autocast (--tune=+precision"), std::string::npos) << out;
}

TEST(JobReport, SvgIsAChartWithEscapedText) {
  Job j = sample_job();
  std::string svg = job_svg(j, judge(j.context, j.timeline));
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(svg.find("a &lt;b&gt; &amp; c"), std::string::npos);
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
  EXPECT_NE(svg.find("GPU utilisation (%)"), std::string::npos);
  EXPECT_NE(svg.find("job GPU memory (GiB)"), std::string::npos);
  EXPECT_NE(svg.find("<path d=\"M"), std::string::npos);
  EXPECT_NE(svg.find("time since start"), std::string::npos);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
}

TEST(JobReport, TableAndJson) {
  Job j = sample_job();
  std::string table = render_jobs_table({j});
  EXPECT_NE(table.find("ID    WHEN"), std::string::npos);
  EXPECT_NE(table.find("7     2025-01-01T00:00:00Z  python3 train.py"), std::string::npos) << table;
  nlohmann::json list = jobs_json({j});
  EXPECT_EQ(list["jobs"][0]["id"], 7);
  EXPECT_TRUE(list["jobs"][0]["verdict"]["name"].is_string());
  EXPECT_FALSE(list["jobs"][0].contains("timeline"));
  nlohmann::json one = job_report_json(j, judge(j.context, j.timeline));
  EXPECT_EQ(one["timeline"]["points"].size(), 120u);
  EXPECT_EQ(one["verdict"], one["verdicts"][0]);
  EXPECT_EQ(render_jobs_table({}).rfind("No watched jobs yet", 0), 0u);
}

TEST(JobReport, SpeedAndTheSpeedUpAgainstTheFirstRun) {
  Job first = sample_job(), now = sample_job();
  first.id = 1, now.id = 4;
  first.speed = JobSpeed{40, 40, 4.0, std::nullopt, 0.5, 10.0, 2.0};
  now.speed = JobSpeed{40, 40, 20.0, std::nullopt, 0.02, 12.5, 61.0};
  now.tuned = "num_workers=15";
  FirstRuns firsts = {{now.command_fp, first}};
  ASSERT_TRUE(speedup(now, firsts));
  EXPECT_DOUBLE_EQ(*speedup(now, firsts), 5.0);
  EXPECT_EQ(speed_text(now, firsts),
            "20.00 steps/s (5.00x job 1, the command's first run), waiting for data 2% of the loop, first step after "
            "12.5 s, 1 min 01 s from the last step to the exit");
  EXPECT_EQ(speed_text(first, firsts).find("x job"), std::string::npos);  // not against itself
  EXPECT_FALSE(speedup(now, {}));
  Job unmeasured = sample_job();
  EXPECT_EQ(speed_text(unmeasured, firsts), "");
  EXPECT_NE(render_jobs_table({now, unmeasured}, firsts).find("20.00 (5.00x)"), std::string::npos);
  std::string one = render_job(now, judge(now.context, now.timeline), false, firsts);
  EXPECT_NE(one.find("  speed: 20.00 steps/s"), std::string::npos) << one;
  EXPECT_NE(one.find("  tuned: num_workers=15"), std::string::npos) << one;
  EXPECT_NE(job_svg(now, {}, firsts).find("speed: 20.00 steps/s (5.00x job 1"), std::string::npos);
  EXPECT_EQ(jobs_json({now}, firsts)["jobs"][0]["speedup"], 5.0);
  EXPECT_TRUE(job_report_json(unmeasured, {}, firsts)["speedup"].is_null());
}

// Issue 40, 4: the measured peak, and against the command's plan when it had one.
TEST(JobReport, PeakMemoryAndThePlansError) {
  const double gib = 1024.0 * 1024 * 1024;
  Job j = sample_job();
  j.peak_memory = JobPeakMemory{std::int64_t(31.2 * gib), "torch"};
  PlannedPeaks plans = {{7, PlannedPeak{"fp", 29.8 * gib, "NVIDIA H200", "--model gpt2 --seq 1024 --batch 8",
                                        "2025-01-01T00:00:00Z"}}};
  struct Row {
    const char* what;
    std::optional<JobPeakMemory> peak;
    bool planned;
    std::string text;
  } rows[] = {
      {"measured, no plan", JobPeakMemory{std::int64_t(31.2 * gib), "torch"}, false, "peak memory 31.2 GiB (torch)"},
      {"over the plan", JobPeakMemory{std::int64_t(31.2 * gib), "torch"}, true,
       "peak memory 31.2 GiB (torch), planned 29.8 GiB for NVIDIA H200: measured +4.7 % over the plan"},
      {"under the plan", JobPeakMemory{std::int64_t(26.82 * gib), "torch"}, true,
       "peak memory 26.8 GiB (torch), planned 29.8 GiB for NVIDIA H200: measured 10.0 % under the plan"},
      {"as planned", JobPeakMemory{std::int64_t(29.8 * gib), "torch"}, true,
       "peak memory 29.8 GiB (torch), planned 29.8 GiB for NVIDIA H200: measured as planned"},
      {"NVML's figure says what it counts", JobPeakMemory{std::int64_t(32 * gib), "nvml"}, true,
       "peak memory 32.0 GiB (nvml), planned 29.8 GiB for NVIDIA H200: measured +7.4 % over the plan (NVML's "
       "figure counts the CUDA context and the allocator's cached blocks, which the plan leaves out)"},
      {"planned, not measured", std::nullopt, true, "peak memory not measured, planned 29.8 GiB for NVIDIA H200"},
      {"neither", std::nullopt, false, ""},
  };
  for (const Row& r : rows) {
    j.peak_memory = r.peak;
    EXPECT_EQ(peak_memory_text(j, r.planned ? plans : PlannedPeaks{}), r.text) << r.what;
    std::string one = render_job(j, judge(j.context, j.timeline), false, {}, r.planned ? plans : PlannedPeaks{});
    if (!r.text.empty()) EXPECT_NE(one.find("\n  " + r.text + "\n"), std::string::npos) << r.what << one;
    else EXPECT_EQ(one.find("peak memory"), std::string::npos) << r.what << one;
  }
  j.peak_memory = JobPeakMemory{std::int64_t(31.2 * gib), "torch"};
  nlohmann::json one = job_report_json(j, judge(j.context, j.timeline), {}, plans);
  EXPECT_EQ(one["peak_memory_bytes"], std::int64_t(31.2 * gib));
  EXPECT_EQ(one["peak_memory_source"], "torch");
  EXPECT_TRUE(one["planned_peak_bytes"].is_number_unsigned());  // whole bytes, as plan-memory --json says
  EXPECT_EQ(one["planned_peak_bytes"], std::llround(29.8 * gib));
  EXPECT_EQ(one["memory_plan"]["peak_bytes"], one["planned_peak_bytes"]);
  EXPECT_NEAR(one["plan_error_pct"].get<double>(), 4.698, 1e-3);
  EXPECT_EQ(one["memory_plan"]["gpu"], "NVIDIA H200");
  EXPECT_EQ(one["memory_plan"]["flags"], "--model gpt2 --seq 1024 --batch 8");
  EXPECT_EQ(one["memory_plan"]["planned_at"], "2025-01-01T00:00:00Z");
  nlohmann::json listed = jobs_json({j}, {}, plans)["jobs"][0];
  EXPECT_EQ(listed["peak_memory_bytes"], one["peak_memory_bytes"]);
  EXPECT_EQ(listed["plan_error_pct"], one["plan_error_pct"]);
  nlohmann::json unplanned = job_report_json(j, {}, {}, {});
  EXPECT_EQ(unplanned["peak_memory_bytes"], std::int64_t(31.2 * gib));
  EXPECT_TRUE(unplanned["planned_peak_bytes"].is_null());
  EXPECT_TRUE(unplanned["plan_error_pct"].is_null());
  EXPECT_TRUE(unplanned["memory_plan"].is_null());
  j.peak_memory.reset();
  nlohmann::json unmeasured = job_report_json(j, {}, {}, plans);
  EXPECT_TRUE(unmeasured["peak_memory_bytes"].is_null());
  EXPECT_TRUE(unmeasured["peak_memory_source"].is_null());
  EXPECT_EQ(unmeasured["planned_peak_bytes"], std::llround(29.8 * gib));
  EXPECT_TRUE(unmeasured["plan_error_pct"].is_null());
}

TEST(JobReport, HumanDuration) {
  EXPECT_EQ(human_duration(12.34), "12.3 s");
  EXPECT_EQ(human_duration(3725), "1 h 02 min");
}

// Whether every character of `s` is one XML 1.0 allows (its Char
// production): #x9, #xA, #xD, #x20-#xD7FF, #xE000-#xFFFD, #x10000-.
bool xml_chars_only(const std::string& s) {
  if (!valid_utf8(s)) return false;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    int n = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
    unsigned cp = n == 1 ? c : c & (0xff >> (n + 1));
    for (int k = 1; k < n; ++k) cp = cp << 6 | (static_cast<unsigned char>(s[i + k]) & 0x3f);
    bool ok = cp == 0x9 || cp == 0xa || cp == 0xd || (cp >= 0x20 && cp <= 0xd7ff) ||
              (cp >= 0xe000 && cp <= 0xfffd) || cp >= 0x10000;
    if (!ok) return false;
    i += n;
  }
  return true;
}

// Issue 21: U+FFFE/U+FFFF in a command line made the SVG ill-formed
// (xmllint: "Char 0xFFFE out of allowed range").
TEST(JobReport, SvgIsWellFormedWhateverTheCommandLine) {
  Job j = sample_job();
  j.argv = {"python3", "\xef\xbf\xbe", "\xef\xbf\xbf", "\x01\x1b[2J", "\xc2\x9b", "\xff", "\xed\xa0\x80",
            std::string(20, 'x') + "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"};
  std::string svg = job_svg(j, judge(j.context, j.timeline));
  EXPECT_TRUE(xml_chars_only(svg)) << svg.substr(0, 300);
  EXPECT_NE(svg.find("\\ufffe \\uffff"), std::string::npos) << svg.substr(0, 300);
  // Every character cut, wherever the 60-byte title ends.
  for (size_t pad = 0; pad < 3; ++pad) {
    j.argv = {std::string(40 + pad, 'a')};
    for (int i = 0; i < 10; ++i) j.argv[0] += "\xe2\x82\xac";
    EXPECT_TRUE(xml_chars_only(job_svg(j, judge(j.context, j.timeline)))) << pad;
  }
}

// Issue 21: report cut a UTF-8 character in half when it shortened a command.
TEST(JobReport, ShorteningKeepsWholeCharacters) {
  const std::string euro = "\xe2\x82\xac";
  for (size_t max = 4; max < 20; ++max) {
    std::string words;
    for (int i = 0; i < 10; ++i) words += euro;
    std::string s = command_text({"a", words}, max);
    EXPECT_TRUE(valid_utf8(s)) << max << ": " << s;
    EXPECT_LE(s.size(), max);
    EXPECT_EQ(s.substr(s.size() - 3), "...");
  }
  Job j = sample_job();
  j.argv = {std::string(39, 'a') + euro + euro};
  std::vector<Job> jobs = {j};
  EXPECT_TRUE(valid_utf8(render_jobs_table(jobs)));
}

}  // namespace
}  // namespace gpuenv
