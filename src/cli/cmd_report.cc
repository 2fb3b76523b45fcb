// gpuenv report [JOB] [--json] [--svg FILE]: the jobs gpuenv run watched;
// gpuenv report --job ID --prometheus URL: one job of any node, from the
// exporters' per-job series in Prometheus (its sequence: flow/fleet_report.h).
#include <cstdlib>

#include "act/render/job_report.h"
#include "act/render/report.h"
#include "act/log.h"
#include "cli/context.h"
#include "cli/commands.h"
#include "store/store.h"
#include "model/exit_codes.h"
#include "decide/verdict.h"
#include "flow/fleet_report.h"
#include "sense/prometheus/prometheus_api.h"
#include "sys/env.h"
#include "sys/file_write.h"
#include "sys/terminal.h"

namespace gpuenv {
namespace {

struct ReportFlags {
  std::string job;  // "" or an id
  std::string job_flag;  // --job
  bool json = false;
  std::string svg, db;
  int limit = 20;
  const CLI::Option* limit_given = nullptr;
  std::string prometheus, since, end;  // --prometheus URL [--since DURATION] [--end TIME]
};

std::optional<std::int64_t> job_id(const std::string& s) {
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v < 1) return std::nullopt;
  return v;
}

// The first measured run of each command among `jobs`.
FirstRuns first_runs(store::Store* db, const std::vector<Job>& jobs) {
  FirstRuns out;
  for (const auto& j : jobs) {
    if (!db || out.count(j.command_fp)) continue;
    std::optional<Job> first;
    std::string err;
    if (db->first_job(j.command_fp, &first, &err) && first) out.emplace(j.command_fp, std::move(*first));
  }
  return out;
}

// The memory plan of each job's command made before it started (plan-memory -- CMD). A plan
// that does not read is said and left out: the jobs are still shown.
PlannedPeaks planned_peaks(store::Store* db, const std::vector<Job>& jobs) {
  PlannedPeaks out;
  for (const auto& j : jobs) {
    std::optional<PlannedPeak> plan;
    std::string err;
    if (db && !db->planned_peak(j.command_fp, j.started_at, &plan, &err))
      log_message(Severity::kWarning, "job store", "left out a memory plan that does not read: " + err, {{"error", err}});
    if (plan) out.emplace(j.id, std::move(*plan));
  }
  return out;
}

int show_one(const Job& job, const ReportFlags& f, const FirstRuns& firsts, const PlannedPeaks& plans) {
  std::vector<Verdict> verdicts = verdicts_of(job);
  if (!f.svg.empty()) {
    std::string err;
    if (!sys::write_output(f.svg, job_svg(job, verdicts, firsts), 0644, &err)) {
      print_error("--svg: " + err);
      return kExitFailure;
    }
  }
  bool utf8 = utf8_locale();
  std::fputs(format_report(JobReport{job, verdicts, firsts, plans, utf8}, format_of(f.json), Style{}).c_str(), stdout);
  return kExitOk;
}

// --since and --end into the request; false with the refusal said.
bool window(const ReportFlags& f, flow::FleetReportRequest* r) {
  if (!f.since.empty() && !prom::parse_duration(f.since, &r->since_s)) {
    print_error("report: --since \"" + f.since + "\" is not a duration (14d, 36h, 1h30m, 2w)");
    return false;
  }
  double end = 0;
  if (!f.end.empty() && f.end != "now" && !prom::parse_time(f.end, &end)) {
    print_error("report: --end \"" + f.end + "\" is not a time: now, unix seconds or RFC 3339 "
                "(2026-01-02T03:04:05Z, 2026-01-02)");
    return false;
  }
  if (!f.end.empty() && f.end != "now") r->end = end;
  return true;
}

// The flags of the other form that --prometheus does not take; "" none.
std::string local_only_flag(const ReportFlags& f) {
  if (!f.svg.empty()) return "--svg";
  if (!f.db.empty()) return "--db";
  if (f.limit_given && f.limit_given->count() > 0) return "--limit";
  return "";
}

int run_fleet(const ReportFlags& f) {
  std::string err;
  if (f.job_flag.empty()) {
    print_error("report: --prometheus needs --job ID, the job to report (Slurm's job id, NAMESPACE/POD, ...)");
    return kExitUsage;
  }
  if (!prom::valid_base_url(f.prometheus, &err)) {
    print_error("report: --prometheus " + err);
    return kExitUsage;
  }
  if (std::string flag = local_only_flag(f); !flag.empty()) {
    print_error("report: " + flag + " reads the local job store, not Prometheus: leave out one or the other");
    return kExitUsage;
  }
  flow::FleetReportRequest r;
  r.job = f.job_flag, r.prometheus = f.prometheus, r.json = f.json;
  if (!window(f, &r)) return kExitUsage;
  sys::HttpGetOptions http;
  http.library = env_or("GPUENV_CURL_LIBRARY", http.library);
  return flow::run_fleet_report(r, flow::real_fleet_report_env(f.prometheus, http));
}

int run_report(Context* ctx, ReportFlags f) {
  if (!f.job.empty() && !f.job_flag.empty()) {
    print_error("report: the job is given twice (JOB and --job): give it once");
    return kExitUsage;
  }
  if (!f.prometheus.empty()) return run_fleet(f);
  if (!f.since.empty() || !f.end.empty()) {
    print_error(std::string("report: ") + (f.since.empty() ? "--end" : "--since") +
                " sets the window of --prometheus, which is not given");
    return kExitUsage;
  }
  if (f.job.empty()) f.job = f.job_flag;
  std::optional<std::int64_t> id;
  if (!f.job.empty() && !(id = job_id(f.job))) {
    print_error("report: JOB must be a job id (a number the job table lists), not \"" + f.job + "\"");
    return kExitUsage;
  }
  std::string err, path = store::chosen_path(f.db, ctx->cache_root());
  auto db = store::Store::open_existing(path, &err);
  std::vector<Job> jobs;
  std::vector<std::string> skipped;
  if (db && !id) db->recent_jobs(f.svg.empty() ? f.limit : 1, &jobs, &err, &skipped);
  for (const auto& why : skipped)
    log_message(Severity::kWarning, "job store", "left out a job that does not read: " + why, {{"error", why}});
  std::optional<Job> one;
  if (db && id) db->job(*id, &one, &err);
  if (!err.empty()) {
    print_error(err);
    return kExitFailure;
  }
  if (id && !one) {
    print_error("report: no job " + f.job + " in " + path + " (gpuenv report lists them)");
    return kExitBadInput;
  }
  if (!f.svg.empty() && !one && !jobs.empty()) one = jobs[0];  // --svg alone: the newest job
  if (!f.svg.empty() && !one) {
    print_error("--svg: no watched job in " + path + " yet");
    return kExitBadInput;
  }
  if (one) return show_one(*one, f, first_runs(db.get(), {*one}), planned_peaks(db.get(), {*one}));
  FirstRuns firsts = first_runs(db.get(), jobs);
  PlannedPeaks plans = f.json ? planned_peaks(db.get(), jobs) : PlannedPeaks{};  // the table shows none
  std::fputs(format_report(JobsReport{jobs, firsts, plans}, format_of(f.json), Style{}).c_str(), stdout);
  return kExitOk;
}

}  // namespace

std::function<int()> setup_report(CLI::App* sub, Context* ctx) {
  auto f = std::make_shared<ReportFlags>();
  sub->add_option("JOB", f->job, "A job id: its timeline, sparklines and verdicts");
  sub->add_option("--job", f->job_flag,
                  "The job: as JOB; with --prometheus, the id its series carry (Slurm's job id, NAMESPACE/POD, "
                  "GPUENV_JOB_ID or pid-N)")
      ->option_text("ID");
  sub->add_option("--prometheus", f->prometheus,
                  "Report --job from the per-job series gpuenv export serves on every node, as Prometheus at URL "
                  "keeps them: jobs of other nodes, and finished ones")
      ->option_text("URL");
  sub->add_option("--since", f->since, "With --prometheus: how far back from --end to look (default 14d; 36h, 1h30m, 2w)")
      ->option_text("DURATION");
  sub->add_option("--end", f->end,
                  "With --prometheus: the window's end (default now; unix seconds, or RFC 3339: 2026-01-02T03:04:05Z)")
      ->option_text("TIME");
  sub->add_flag("--json", f->json, "As JSON (with the timeline for one job)");
  sub->add_option("--svg", f->svg, "Write the job's chart (SVG) to FILE (the newest job without JOB)")->option_text("FILE");
  f->limit_given =
      sub->add_option("--limit", f->limit, "How many recent jobs the table lists (default 20)")->check(CLI::Range(1, 10000));
  sub->add_option("--db", f->db, "The job store (default: gpuenv.db under the cache root)")->option_text("FILE");
  sub->footer(
      "Exit status: 0 shown; 1 the store, or Prometheus, could not be read (the message names it and what "
      "failed); 2 bad command line (--prometheus without --job, JOB and --job both, --since or --end without "
      "--prometheus); 3 no such job in the store, or no series of it in Prometheus's window.");
  ctx->add_common_flags(sub, kFlagCacheRoot);
  return [ctx, f] { return run_report(ctx, *f); };
}

}  // namespace gpuenv
