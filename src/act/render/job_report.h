// `gpuenv report`: watched jobs as a table, one job with sparklines and its
// verdicts, the same as JSON, and an SVG chart of one job.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "decide/verdict.h"
#include "model/job.h"

namespace gpuenv {

/// Each command's first job with a measured speed, by command fingerprint:
/// what report's speed-up compares with.
using FirstRuns = std::map<std::string, Job>;

/// ID, WHEN, COMMAND, DURATION, EXIT, STEPS/S (and the speed-up against the
/// command's first run), VERDICT: one line per job.
std::string render_jobs_table(const std::vector<Job>& jobs, const FirstRuns& firsts = {});

/// One job: what ran, its speed, the verdicts with evidence and fix, and sparklines of
/// utilisation and memory (Unicode blocks, or ASCII when `utf8` is false).
std::string render_job(const Job& job, const std::vector<Verdict>& verdicts, bool utf8, const FirstRuns& firsts = {});

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
nlohmann::json jobs_json(const std::vector<Job>& jobs, const FirstRuns& firsts = {});
/// The job with its timeline and every verdict.
nlohmann::json job_report_json(const Job& job, const std::vector<Verdict>& verdicts, const FirstRuns& firsts = {});

/// "1 h 02 min", "3 min 05 s", "12.3 s".
std::string human_duration(double seconds);

/// The command line for people: arguments with spaces quoted, cut at `max`
/// characters.
std::string command_text(const std::vector<std::string>& argv, std::size_t max);

/// Whether the locale (LC_ALL, LC_CTYPE, LANG: the first set) is UTF-8.
bool utf8_locale(const char* lc_all, const char* lc_ctype, const char* lang);

}  // namespace gpuenv
