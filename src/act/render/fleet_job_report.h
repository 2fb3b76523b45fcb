// `gpuenv report --job ID --prometheus URL`: one job's use of the fleet
// (decide/fleet/job_summary.h), as text in the manner of Princeton's
// jobstats, or as one JSON object (docs/cluster.md, "Reporting a job from
// Prometheus", lists its fields).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "act/render/machine_report.h"
#include "decide/fleet/job_summary.h"

namespace gpuenv {

/// Where the figures came from: Prometheus's URL and the window asked.
struct FleetReportSource {
  std::string prometheus;
  double window_start = 0, window_end = 0;  // unix seconds
};

/// The job, its GPUs, the verdicts over time, the main verdict's fix and
/// the notes. Every label value is made printable.
std::string render_fleet_job(const fleet::JobSummary& s, const FleetReportSource& source);

/// The same as one JSON object; times are unix seconds, an unknown figure is
/// null (never 0).
nlohmann::json fleet_job_json(const fleet::JobSummary& s, const FleetReportSource& source);

/// `gpuenv report --job ID --prometheus URL`: the job and where its figures came from.
struct FleetJobReport {
  const fleet::JobSummary& summary;
  const FleetReportSource& source;
};
nlohmann::json report_json(const FleetJobReport& r);
std::string report_text(const FleetJobReport& r, const Style& style);

}  // namespace gpuenv
