// How `gpuenv bench` shows its results: a table, JSON, the history, and
// the progress line on a terminal.
#pragma once

#include <cstdint>
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
std::string results_json(const RunInfo& info, const std::vector<Result>& results);

/// `gpuenv bench --history`: each case's figures over time, oldest first.
std::string render_history(const std::string& machine, const std::vector<store::HistoryRow>& rows);
std::string history_json(const std::string& machine, const std::string& fingerprint,
                         const std::vector<store::HistoryRow>& rows);

/// The line shown on stderr while case `index` of `count` runs.
std::string progress_line(size_t index, size_t count, const Planned& p);

}  // namespace gpuenv::bench
