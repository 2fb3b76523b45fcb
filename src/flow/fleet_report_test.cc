// `gpuenv report --job ID --prometheus URL`'s sequence against a fake
// Prometheus: raw samples, and range queries answered as Prometheus answers
// the few shapes the sequence asks (a selector, timestamp() of one,
// count_over_time over one). The report of a found job, the job under
// exported_job, a job with no series, and Prometheus failing on the first
// query or a later one.
#include "flow/fleet_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "model/exit_codes.h"

namespace gpuenv::flow {
namespace {

using Labels = std::map<std::string, std::string>;
constexpr double T0 = 1767225600;  // 2026-01-01T00:00:00Z

struct Raw {
  std::string metric;
  Labels labels;
  std::vector<prom::Sample> samples;
};

class FakePrometheus {
 public:
  std::vector<Raw> raws;
  std::vector<prom::RangeQuery> asked;
  std::string fail;         // every query from the `fail_from`th fails with this
  std::size_t fail_from = 0;

  bool answer(const prom::RangeQuery& q, std::vector<prom::Series>* out, std::string* err) {
    asked.push_back(q);
    if (!fail.empty() && asked.size() > fail_from) {
      *err = fail;
      return false;
    }
    std::smatch m;
    std::regex_search(q.expr, m, std::regex(R"re(job="([^"]*)")re"));
    std::string job = m[1];
    std::regex_search(q.expr, m, std::regex(R"(gpuenv_job_\w+)"));
    std::string metric = m[0];
    out->clear();
    for (const Raw& r : raws)
      if (r.metric == metric && (job_of(r.labels) == job)) out->push_back(evaluate(q, r));
    return true;
  }

 private:
  static std::string job_of(const Labels& l) {
    return l.count("exported_job") ? l.at("exported_job") : l.at("job");
  }

  static prom::Series evaluate(const prom::RangeQuery& q, const Raw& r) {
    prom::Series s{r.labels, {}};
    std::smatch m;
    bool count = std::regex_search(q.expr, m, std::regex(R"(\[(\d+)s\])"));
    double range = count ? std::stod(m[1]) : 300;
    bool times = q.expr.rfind("timestamp(", 0) == 0;
    if (count || times) s.labels.erase("__name__");
    for (double t = q.start; t <= q.end + 1e-9; t += q.step) {
      const prom::Sample* newest = nullptr;
      int n = 0;
      for (const prom::Sample& x : r.samples)
        if (x.t <= t + 1e-9 && t - x.t < range) newest = &x, ++n;
      if (newest) s.samples.push_back({t, count ? n : times ? newest->t : newest->v});
    }
    return s;
  }
};

std::vector<prom::Sample> every15(double from, double to, double (*f)(double)) {
  std::vector<prom::Sample> out;
  for (double t = from; t <= to; t += 15) out.push_back({t, f(t - from)});
  return out;
}

Labels gpu0(Labels job = {{"job", "42"}}) {
  Labels l = {{"__name__", "x"}, {"user", "alice"}, {"scheduler", "slurm"}, {"hostname", "n1"}, {"gpu", "0"},
              {"UUID", "GPU-0"}};
  l.insert(job.begin(), job.end());
  return l;
}

void add_job(FakePrometheus* p, Labels job = {{"job", "42"}}) {
  p->raws.push_back({"gpuenv_job_gpu_seconds_total", gpu0(job), every15(T0, T0 + 3600, [](double s) { return s; })});
  p->raws.push_back({"gpuenv_job_energy_joules_total", gpu0(job), every15(T0, T0 + 3600, [](double s) { return 250 * s; })});
  p->raws.push_back({"gpuenv_job_gpu_utilization_ratio", gpu0(job), every15(T0, T0 + 3600, [](double) { return 0.5; })});
  Labels v = {{"user", "alice"}, {"scheduler", "slurm"}, {"hostname", "n1"}, {"verdict", "input-bound"},
              {"fix", "raise num_workers"}};
  v.insert(job.begin(), job.end());
  p->raws.push_back({"gpuenv_job_verdict", v, every15(T0, T0 + 3600, [](double) { return 1.0; })});
}

struct FleetSaid {
  std::vector<std::string> printed;
  std::vector<std::pair<std::string, std::string>> logged;  // event, text
};

FleetReportEnv fake_env(FakePrometheus* p, FleetSaid* said) {
  FleetReportEnv env;
  env.query_range = [p](const prom::RangeQuery& q, std::vector<prom::Series>* out, std::string* err) {
    return p->answer(q, out, err);
  };
  env.now = [] { return T0 + 86400; };
  env.print = [said](const std::string& s) { said->printed.push_back(s); };
  env.log = [said](Severity, const std::string& event, const std::string& text, nlohmann::ordered_json) {
    said->logged.push_back({event, text});
  };
  return env;
}

FleetReportRequest request(bool json = true) {
  FleetReportRequest r;
  r.job = "42", r.prometheus = "http://prom:9090", r.json = json;
  return r;
}

TEST(FleetReport, ReportsAJobFoundInTheWindow) {
  FakePrometheus p;
  add_job(&p);
  FleetSaid said;
  ASSERT_EQ(run_fleet_report(request(), fake_env(&p, &said)), kExitOk);
  ASSERT_EQ(said.printed.size(), 1u);
  EXPECT_TRUE(said.logged.empty());
  auto j = nlohmann::json::parse(said.printed[0]);
  EXPECT_EQ(j["job"], "42");
  EXPECT_EQ(j["user"], "alice");
  EXPECT_DOUBLE_EQ(j["gpu_hours"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["energy_j"].get<double>(), 900000);
  EXPECT_EQ(j["start"], T0);
  EXPECT_EQ(j["end"], T0 + 3600);
  EXPECT_EQ(j["running"], false);  // its last sample is a day old
  EXPECT_EQ(j["source"]["window_start"], T0 + 86400 - 14 * 86400);
  ASSERT_EQ(j["verdicts"].size(), 1u);
  EXPECT_EQ(j["verdicts"][0]["from"], T0);
  EXPECT_EQ(j["verdicts"][0]["to"], T0 + 3600);
  EXPECT_EQ(j["main_verdict"]["fix"], "raise num_workers");
  // The window first, every 121 s (14 days in 10,000 points), then the 16 series in the job's life.
  ASSERT_EQ(p.asked.size(), 17u);
  EXPECT_EQ(p.asked[0].step, 121);
  EXPECT_EQ(p.asked[0].end, T0 + 86400);
  EXPECT_EQ(p.asked[0].expr, "count_over_time(gpuenv_job_gpu_seconds_total{job=\"42\",exported_job=\"\"}[121s]) or "
                             "count_over_time(gpuenv_job_gpu_seconds_total{exported_job=\"42\"}[121s])");
  EXPECT_EQ(p.asked[1].step, 5);
  EXPECT_LT(p.asked[1].start, T0 + 5);  // its first point sees the first sample
  EXPECT_GE(p.asked[1].end, T0 + 3600);
  EXPECT_LE(p.asked[1].end - p.asked[1].start, 3600 + 2 * 121);
}

TEST(FleetReport, ReportsAsTextToo) {
  FakePrometheus p;
  add_job(&p);
  FleetSaid said;
  ASSERT_EQ(run_fleet_report(request(false), fake_env(&p, &said)), kExitOk);
  ASSERT_EQ(said.printed.size(), 1u);
  EXPECT_EQ(said.printed[0].rfind("Job 42 (slurm), user alice\n", 0), 0u) << said.printed[0];
  EXPECT_NE(said.printed[0].find("Main verdict: input-bound, 1 h 00 min\n  Fix: raise num_workers\n"), std::string::npos);
}

TEST(FleetReport, FindsTheJobUnderExportedJob) {
  FakePrometheus p;
  add_job(&p, {{"job", "gpuenv"}, {"exported_job", "42"}});
  FleetSaid said;
  ASSERT_EQ(run_fleet_report(request(), fake_env(&p, &said)), kExitOk);
  auto j = nlohmann::json::parse(said.printed.at(0));
  EXPECT_DOUBLE_EQ(j["gpu_hours"].get<double>(), 1.0);
}

TEST(FleetReport, AJobWithNoSeriesInTheWindowIsSaid) {
  FakePrometheus p;
  add_job(&p);
  FleetSaid said;
  FleetReportRequest r = request();
  r.end = T0 + 86400 * 30, r.since_s = 86400;  // a day, long after the job
  EXPECT_EQ(run_fleet_report(r, fake_env(&p, &said)), kExitBadInput);
  EXPECT_TRUE(said.printed.empty());
  ASSERT_EQ(said.logged.size(), 1u);
  EXPECT_EQ(said.logged[0].first, "no job");
  EXPECT_EQ(said.logged[0].second,
            "report: job 42 has no series at Prometheus http://prom:9090 between 2026-01-30T00:00:00Z and "
            "2026-01-31T00:00:00Z (no gpuenv_job_gpu_seconds_total with job or exported_job \"42\"): check the id, "
            "widen the window with --since or --end, and that Prometheus scrapes gpuenv export on the job's nodes");
  EXPECT_EQ(p.asked.size(), 1u);
}

TEST(FleetReport, PrometheusFailingIsSaid) {
  for (std::size_t from : {0u, 5u}) {
    FakePrometheus p;
    add_job(&p);
    p.fail = "Prometheus at http://prom:9090 (/api/v1/query_range): Failed to connect to prom port 9090";
    p.fail_from = from;
    FleetSaid said;
    EXPECT_EQ(run_fleet_report(request(), fake_env(&p, &said)), kExitFailure) << from;
    EXPECT_TRUE(said.printed.empty());
    ASSERT_EQ(said.logged.size(), 1u);
    EXPECT_EQ(said.logged[0].first, "prometheus");
    EXPECT_EQ(said.logged[0].second, "report --job 42: " + p.fail);
    EXPECT_EQ(p.asked.size(), from + 1);
  }
}

}  // namespace
}  // namespace gpuenv::flow
