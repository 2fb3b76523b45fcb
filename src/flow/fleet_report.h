// `gpuenv report --job ID --prometheus URL`'s sequence (docs/cluster.md,
// "Reporting a job from Prometheus"): find where in the window the job has
// samples, ask Prometheus for its per-job series there, summarise them
// (decide/fleet/job_summary.h) and print the report. Handed its queries
// (FleetReportEnv), so a test runs it whole against a fake Prometheus;
// cli/cmd_report.cc only parses the flags into a FleetReportRequest.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "act/log.h"
#include "sense/prometheus/prometheus_api.h"
#include "sys/http_get.h"

namespace gpuenv::flow {

/// What `gpuenv report --job ID --prometheus URL` was asked.
struct FleetReportRequest {
  std::string job;
  std::string prometheus;  // the server's URL: http(s)://HOST:PORT[/PREFIX]
  bool json = false;
  double since_s = 14 * 86400.0;  // the window reaches this far back from its end
  std::optional<double> end;      // unix seconds; nullopt: now
};

/// One range query: false with *err naming Prometheus's URL and what failed.
using RangeQueryFn = std::function<bool(const prom::RangeQuery&, std::vector<prom::Series>*, std::string* err)>;

/// What the sequence is handed: the real ones in a command, fakes in a test.
struct FleetReportEnv {
  RangeQueryFn query_range;
  std::function<double()> now;                      // unix seconds
  std::function<void(const std::string&)> print;    // stdout: the report
  MessageSink log = log_message;                    // stderr: what failed
};

/// Runs the report. Exit status: kExitOk printed; kExitBadInput the job has
/// no series in the window (as `gpuenv report JOB` for a job not in the
/// store); kExitFailure Prometheus did not answer, answered an HTTP error or
/// an answer that does not parse (each said, naming the URL).
int run_fleet_report(const FleetReportRequest& request, const FleetReportEnv& env);

/// The real query: Prometheus at `base`, asked through sys::http_get.
RangeQueryFn prometheus_range_query(const std::string& base, const sys::HttpGetOptions& options);

/// The real environment: prometheus_range_query, the wall clock, stdout and
/// log_message.
FleetReportEnv real_fleet_report_env(const std::string& base, const sys::HttpGetOptions& options);

}  // namespace gpuenv::flow
