#include "flow/fleet_report.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "act/render/fleet_job_report.h"
#include "act/render/report.h"
#include "decide/fleet/job_summary.h"
#include "model/exit_codes.h"
#include "sys/text.h"

namespace gpuenv::flow {
namespace {

using fleet::JobAnswers;
using fleet::JobSeries;

// Where the first query looks: at most this many points over the window,
// and the finer queries: at most this many over the job's life. Prometheus
// refuses more than 11,000 points a series.
constexpr double kCoarsePoints = 10000;
constexpr double kFinePoints = 3000;
constexpr double kFinestStep = 5;  // gpuenv export's default interval: finer shows nothing new

// The series each finer query fills ("{}" is the job's selector).
struct Ask {
  const char* pattern;
  std::vector<JobSeries> JobAnswers::*into;
};
const Ask kAsks[] = {
    {"timestamp(gpuenv_job_gpu_seconds_total{})", &JobAnswers::gpu_sample_times},
    {"gpuenv_job_gpu_seconds_total{}", &JobAnswers::gpu_seconds},
    {"gpuenv_job_energy_joules_total{}", &JobAnswers::energy},
    {"gpuenv_job_gpu_shared{}", &JobAnswers::shared},
    {"gpuenv_job_gpu_utilization_ratio{}", &JobAnswers::utilization},
    {"gpuenv_job_sm_active_ratio{}", &JobAnswers::sm_active},
    {"gpuenv_job_tensor_active_ratio{}", &JobAnswers::tensor_active},
    {"gpuenv_job_fp32_active_ratio{}", &JobAnswers::fp32_active},
    {"gpuenv_job_fp16_active_ratio{}", &JobAnswers::fp16_active},
    {"gpuenv_job_memory_used_bytes{}", &JobAnswers::memory_used},
    {"gpuenv_job_memory_peak_bytes{}", &JobAnswers::memory_peak},
    {"gpuenv_job_cpu_cores_used{}", &JobAnswers::cpu_used},
    {"gpuenv_job_cpu_cores_allowed{}", &JobAnswers::cpu_allowed},
    {"gpuenv_job_processes{}", &JobAnswers::processes},
    {"gpuenv_job_start_timestamp_seconds{}", &JobAnswers::start_time},
    {"timestamp(gpuenv_job_verdict{})", &JobAnswers::verdict_sample_times},
};

struct Window {
  double start = 0, end = 0;
};

// Points every `step` ending at `end` exactly, the first at or after `start`.
prom::RangeQuery aligned(std::string expr, double start, double end, double step) {
  double n = std::floor((end - start) / step);
  return {std::move(expr), end - n * step, end, step};
}

std::vector<JobSeries> job_series(std::vector<prom::Series> answer) {
  prom::restore_job_label(&answer);
  std::vector<JobSeries> out;
  out.reserve(answer.size());
  for (prom::Series& s : answer) {
    s.labels.erase("__name__");
    JobSeries j{std::move(s.labels), {}};
    j.points.reserve(s.samples.size());
    for (const prom::Sample& p : s.samples) j.points.push_back({p.t, p.v});
    out.push_back(std::move(j));
  }
  return out;
}

// Where in the window the job has samples: the first and last of the
// points (each counting the samples of the `coarse` seconds up to it) that
// found one; false with *err when Prometheus failed, *found false when none did.
bool locate(const FleetReportRequest& r, const FleetReportEnv& env, const Window& w, Window* life, bool* found,
            std::string* err) {
  double coarse = std::max(60.0, std::ceil((w.end - w.start) / kCoarsePoints));
  std::string range = "[" + std::to_string(static_cast<long long>(coarse)) + "s]";
  prom::RangeQuery q = aligned(prom::either_job("count_over_time(gpuenv_job_gpu_seconds_total{}" + range + ")", r.job),
                               w.start, w.end, coarse);
  std::vector<prom::Series> answer;
  if (!env.query_range(q, &answer, err)) return false;
  life->start = INFINITY, life->end = -INFINITY;
  for (const prom::Series& s : answer)
    for (const prom::Sample& p : s.samples)
      if (p.v > 0) life->start = std::min(life->start, p.t), life->end = std::max(life->end, p.t);
  *found = std::isfinite(life->start);
  if (*found) life->start = std::max(w.start, life->start - coarse);
  return true;
}

bool ask_all(const FleetReportRequest& r, const FleetReportEnv& env, const Window& life, JobAnswers* a,
             std::string* err) {
  a->step = std::max(kFinestStep, std::ceil((life.end - life.start) / kFinePoints));
  a->from = aligned("", life.start, life.end, a->step).start;
  for (const Ask& ask : kAsks) {
    std::vector<prom::Series> answer;
    if (!env.query_range(aligned(prom::either_job(ask.pattern, r.job), life.start, life.end, a->step), &answer, err))
      return false;
    (a->*ask.into) = job_series(std::move(answer));
  }
  return true;
}

std::string when(double t) { return utc_time(static_cast<std::time_t>(std::floor(t))); }

int not_found(const FleetReportRequest& r, const FleetReportEnv& env, const Window& w) {
  std::string text = "report: job " + r.job + " has no series at Prometheus " + r.prometheus + " between " +
                     when(w.start) + " and " + when(w.end) +
                     " (no gpuenv_job_gpu_seconds_total with job or exported_job \"" + r.job +
                     "\"): check the id, widen the window with --since or --end, and that Prometheus scrapes "
                     "gpuenv export on the job's nodes";
  env.log(Severity::kError, "no job", text,
          {{"job", r.job}, {"prometheus", r.prometheus}, {"window_start", when(w.start)}, {"window_end", when(w.end)}});
  return kExitBadInput;
}

int failed(const FleetReportRequest& r, const FleetReportEnv& env, const std::string& err) {
  env.log(Severity::kError, "prometheus", "report --job " + r.job + ": " + err,
          {{"job", r.job}, {"prometheus", r.prometheus}, {"error", err}});
  return kExitFailure;
}

}  // namespace

int run_fleet_report(const FleetReportRequest& r, const FleetReportEnv& env) {
  Window w;
  w.end = r.end ? *r.end : env.now();
  w.start = w.end - r.since_s;
  Window life;
  bool found = false;
  std::string err;
  if (!locate(r, env, w, &life, &found, &err)) return failed(r, env, err);
  if (!found) return not_found(r, env, w);
  JobAnswers a;
  a.job = r.job, a.window_start = w.start, a.window_end = w.end, a.end_is_now = !r.end;
  if (!ask_all(r, env, life, &a, &err)) return failed(r, env, err);
  std::optional<fleet::JobSummary> s = fleet::summarize_job(a);
  if (!s) return not_found(r, env, w);  // gone between the queries (retention)
  FleetReportSource source{r.prometheus, w.start, w.end};
  env.print(format_report(FleetJobReport{*s, source}, format_of(r.json), Style{}));
  return kExitOk;
}

RangeQueryFn prometheus_range_query(const std::string& base, const sys::HttpGetOptions& options) {
  prom::Client client(base, [options](const std::string& url, sys::HttpResponse* out, std::string* err) {
    return sys::http_get(url, options, out, err);
  });
  return [client](const prom::RangeQuery& q, std::vector<prom::Series>* out, std::string* err) {
    return client.query_range(q, out, err);
  };
}

FleetReportEnv real_fleet_report_env(const std::string& base, const sys::HttpGetOptions& options) {
  FleetReportEnv env;
  env.query_range = prometheus_range_query(base, options);
  env.now = [] {
    using namespace std::chrono;
    return duration<double>(system_clock::now().time_since_epoch()).count();
  };
  env.print = [](const std::string& s) { std::fputs(s.c_str(), stdout); };
  return env;
}

}  // namespace gpuenv::flow
