// `gpuenv report`: watched jobs as a table, one job with sparklines and its
// verdicts, the same as JSON, and an SVG chart of one job.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "act/render/machine_report.h"
#include "decide/verdict.h"
#include "model/job.h"

namespace gpuenv {

/// Each command's first job with a measured speed, by command fingerprint:
/// what report's speed-up compares with.
using FirstRuns = std::map<std::string, Job>;

/// The memory plan of each job's command (`gpuenv plan-memory -- CMD`) made
/// before the job started, by job id: what report compares its peak with.
using PlannedPeaks = std::map<std::int64_t, PlannedPeak>;

/// ID, WHEN, COMMAND, DURATION, EXIT, STEPS/S (and the speed-up against the
/// command's first run), VERDICT: one line per job.
std::string render_jobs_table(const std::vector<Job>& jobs, const FirstRuns& firsts = {});

/// One job: what ran, its speed, the verdicts with evidence and fix, and sparklines of
/// utilisation and memory (Unicode blocks, or ASCII when `utf8` is false).
std::string render_job(const Job& job, const std::vector<Verdict>& verdicts, bool utf8, const FirstRuns& firsts = {},
                       const PlannedPeaks& plans = {});

/// "peak memory 31.2 GiB (torch), planned 29.8 GiB for NVIDIA H200: measured
/// +4.7 % over the plan"; "" when the job has neither a measured peak nor a plan.
std::string peak_memory_text(const Job& job, const PlannedPeaks& plans);

/// The job's steps/s over its command's first run's; nullopt when either is unknown.
std::optional<double> speedup(const Job& job, const FirstRuns& firsts);

/// "12.3 steps/s (4.9x job 1, the command's first run), 12.4 batches/s, ..."; "" when unknown.
std::string speed_text(const Job& job, const FirstRuns& firsts);

/// `values` (nullopt: no sample) as `width` characters scaled to 0..`top`.
std::string sparkline(const std::vector<std::optional<double>>& values, double top, std::size_t width, bool utf8);

/// An SVG chart: utilisation (%) and the job's GPU memory (GiB) over time,
/// with axes, labels, a legend and the verdict as the title.
std::string job_svg(const Job& job, const std::vector<Verdict>& verdicts, const FirstRuns& firsts = {});

nlohmann::json verdict_json(const Verdict& v);
/// {"jobs": [...]} with each job's main verdict (no timelines).
/// Each job also has planned_peak_bytes, plan_error_pct and memory_plan
/// (null when its command had no plan, or no measured peak for the error).
nlohmann::json jobs_json(const std::vector<Job>& jobs, const FirstRuns& firsts = {}, const PlannedPeaks& plans = {});
/// The job with its timeline and every verdict (and the plan, as jobs_json).
nlohmann::json job_report_json(const Job& job, const std::vector<Verdict>& verdicts, const FirstRuns& firsts = {},
                               const PlannedPeaks& plans = {});

/// `gpuenv report JOB`: one job, as render_job and job_report_json show it.
struct JobReport {
  const Job& job;
  const std::vector<Verdict>& verdicts;
  const FirstRuns& firsts;
  const PlannedPeaks& plans;
  bool utf8 = true;  // the text's sparklines in Unicode blocks, or ASCII
};
nlohmann::json report_json(const JobReport& r);
std::string report_text(const JobReport& r, const Style& style);

/// `gpuenv report`: the recent jobs, as render_jobs_table (which shows no
/// plans) and jobs_json show them.
struct JobsReport {
  const std::vector<Job>& jobs;
  const FirstRuns& firsts;
  const PlannedPeaks& plans;
};
nlohmann::json report_json(const JobsReport& r);
std::string report_text(const JobsReport& r, const Style& style);

/// "1 h 02 min", "3 min 05 s", "12.3 s".
std::string human_duration(double seconds);

/// The command line for people: arguments with spaces quoted, cut at `max`
/// characters.
std::string command_text(const std::vector<std::string>& argv, std::size_t max);


}  // namespace gpuenv
