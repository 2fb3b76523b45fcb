// `gpuenv report`: watched jobs as a table, one job with sparklines and its
// verdicts, the same as JSON, and an SVG chart of one job.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "decide/verdict.h"
#include "model/job.h"

namespace gpuenv {

/// ID, WHEN, COMMAND, DURATION, EXIT, VERDICT: one line per job.
std::string render_jobs_table(const std::vector<Job>& jobs);

/// One job: what ran, the verdicts with evidence and fix, and sparklines of
/// utilisation and memory (Unicode blocks, or ASCII when `utf8` is false).
std::string render_job(const Job& job, const std::vector<Verdict>& verdicts, bool utf8);

/// `values` (nullopt: no sample) as `width` characters scaled to 0..`top`.
std::string sparkline(const std::vector<std::optional<double>>& values, double top, std::size_t width, bool utf8);

/// An SVG chart: utilisation (%) and the job's GPU memory (GiB) over time,
/// with axes, labels, a legend and the verdict as the title.
std::string job_svg(const Job& job, const std::vector<Verdict>& verdicts);

nlohmann::json verdict_json(const Verdict& v);
/// {"jobs": [...]} with each job's main verdict (no timelines).
nlohmann::json jobs_json(const std::vector<Job>& jobs);
/// The job with its timeline and every verdict.
nlohmann::json job_report_json(const Job& job, const std::vector<Verdict>& verdicts);

/// "1 h 02 min", "3 min 05 s", "12.3 s".
std::string human_duration(double seconds);

/// The command line for people: arguments with spaces quoted, cut at `max`
/// characters.
std::string command_text(const std::vector<std::string>& argv, std::size_t max);

/// Whether the locale (LC_ALL, LC_CTYPE, LANG: the first set) is UTF-8.
bool utf8_locale(const char* lc_all, const char* lc_ctype, const char* lang);

}  // namespace gpuenv
