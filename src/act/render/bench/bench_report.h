// How `gpuenv bench` shows its results: a table, JSON, the history, and
// the progress line on a terminal.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "act/render/machine_report.h"
#include "bench/bench.h"
#include "store/store.h"

namespace gpuenv::bench {

/// What the run was, for the header and the JSON.
struct RunInfo {
  std::string machine;      // store::describe_machine()
  std::string fingerprint;  // store::fingerprint()
  std::string started_at;
  double seconds = 0;
  std::optional<std::string> store_path;
  std::optional<std::int64_t> run_id;
  std::vector<Device> devices;
};

/// The table: one row per result, skipped ones last with their reasons.
std::string render_results(const RunInfo& info, const std::vector<Result>& results, const Style& style);

/// The results as JSON, every sample included.
nlohmann::json results_json(const RunInfo& info, const std::vector<Result>& results);

/// `gpuenv bench`: a run's results.
struct ResultsReport {
  const RunInfo& info;
  const std::vector<Result>& results;
};
nlohmann::json report_json(const ResultsReport& r);
std::string report_text(const ResultsReport& r, const Style& style);

/// `gpuenv bench --history`: each case's figures over time, oldest first.
std::string render_history(const std::string& machine, const std::vector<store::HistoryRow>& rows);

/// `gpuenv bench --history`: a machine's stored figures.
struct HistoryReport {
  const std::string& machine;      // store::describe_machine()
  const std::string& fingerprint;  // store::fingerprint()
  const std::vector<store::HistoryRow>& rows;
};
/// {"machine", "fingerprint", "measurements": [...]}, each with its run_id and command.
nlohmann::json report_json(const HistoryReport& r);
/// render_history's.
std::string report_text(const HistoryReport& r, const Style& style);

/// The line shown on stderr while case `index` of `count` runs.
std::string progress_line(size_t index, size_t count, const Planned& p);

}  // namespace gpuenv::bench
