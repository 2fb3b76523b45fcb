#include "act/render/bench/bench_report.h"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "bench/stats.h"
#include "model/measurement_json.h"

namespace gpuenv::bench {
namespace {

using nlohmann::json;

const char* status_name(BenchStatus s) {
  switch (s) {
    case BenchStatus::kOk:
      return "ok";
    case BenchStatus::kSkipped:
      return "skipped";
    case BenchStatus::kWrong:
      return "wrong";
    default:
      return "error";
  }
}

std::string percent_text(const Result& r) {
  auto pct = percent_of_peak(r.value, r.peak);
  if (!pct) return "";
  return fmt::format("{:.0f} % of {}", *pct, format_value(*r.peak, r.unit()));
}

std::string result_row(const Result& r, const Style& st) {
  std::string value = r.value ? format_value(*r.value, r.unit()) : "-";
  std::string note =
      r.failed() ? std::string(r.status == BenchStatus::kWrong ? "WRONG: " : "FAILED: ") + r.message : r.detail;
  if (r.failed() && st.color) note = "\033[31m" + note + "\033[0m";
  return fmt::format("{:<5} {:<18} {:>16} {:>22}  {}\n", target_label(r), r.key, value, percent_text(r),
                     printable(note));
}

json result_json(const Result& r) {
  json uuids = json::array(), ordinals = json::array();
  for (const auto& d : r.target.devices) uuids.push_back(d.uuid), ordinals.push_back(d.ordinal);
  auto mid = median(r.samples);
  auto pct = percent_of_peak(r.value, r.peak);
  return {{"key", r.key},
          {"description", r.description},
          {"devices", ordinals},
          {"uuids", uuids},
          {"status", status_name(r.status)},
          {"value", r.value ? json(*r.value) : json(nullptr)},
          {"unit", r.unit()},
          {"peak", r.peak ? json(*r.peak) : json(nullptr)},
          {"percent_of_peak", pct ? json(*pct) : json(nullptr)},
          {"median_s", mid ? json(*mid) : json(nullptr)},
          {"samples_s", r.samples},
          {"work", r.work},
          {"error", r.error >= 0 ? json(r.error) : json(nullptr)},
          {"mismatches", r.mismatches},
          {"detail", r.detail},
          {"message", r.message},
          {"wall_s", r.wall_s}};
}

// The p2p figures as a matrix, row: from, column: to ("" when there are none).
std::string p2p_matrix(const std::vector<Result>& results, const std::vector<Device>& devices) {
  std::map<std::pair<int, int>, std::string> cell;
  for (const auto& r : results)
    if (r.key == "p2p" && r.scope == CaseScope::kPair && r.target.devices.size() == 2)
      cell[{r.target.devices[0].ordinal, r.target.devices[1].ordinal}] =
          r.value ? fmt::format("{:.0f}", *r.value) : (r.status == BenchStatus::kSkipped ? "n/a" : "FAIL");
  if (cell.empty()) return "";
  std::string out = "\np2p GB/s (row: from, column: to)\n     ";
  for (const auto& d : devices) out += fmt::format("{:>7}", d.ordinal);
  for (const auto& from : devices) {
    out += fmt::format("\n{:<5}", from.ordinal);
    for (const auto& to : devices) {
      auto it = cell.find({from.ordinal, to.ordinal});
      out += fmt::format("{:>7}", from.ordinal == to.ordinal ? "-" : it == cell.end() ? "" : it->second);
    }
  }
  return out + "\n";
}

std::string history_key(const Measurement& m) {
  std::string k = m.key + "  " + (m.gpu_uuid.empty() ? "all GPUs" : m.gpu_uuid);
  if (m.peer_uuid) k += " -> " + *m.peer_uuid;
  return k;
}

}  // namespace

std::string render_results(const RunInfo& info, const std::vector<Result>& results, const Style& st) {
  std::string out = fmt::format("gpuenv bench: {} ({})\n", printable(info.machine), info.fingerprint);
  for (const auto& d : info.devices)
    out += fmt::format("  CUDA device {}: {}  cc {}  {}\n", d.ordinal, printable(d.name), cc_string(d.cc),
                       printable(d.uuid));
  out += fmt::format("\n{:<5} {:<18} {:>16} {:>22}  {}\n", "GPU", "case", "result", "of spec peak", "method");
  std::string skipped;
  for (const auto& r : results) {
    if (r.status == BenchStatus::kSkipped)
      skipped += fmt::format("  {:<5} {:<18} {}\n", target_label(r), r.key, printable(r.message));
    else
      out += result_row(r, st);
  }
  out += p2p_matrix(results, info.devices);
  if (!skipped.empty()) out += "\nskipped:\n" + skipped;
  out += fmt::format("\ntook {:.1f} s", info.seconds);
  if (info.store_path && info.run_id) out += fmt::format("; stored as run {} in {}", *info.run_id, *info.store_path);
  return out + "\n";
}

json results_json(const RunInfo& info, const std::vector<Result>& results) {
  json devices = json::array(), rs = json::array();
  for (const auto& d : info.devices)
    devices.push_back({{"ordinal", d.ordinal},
                       {"name", d.name},
                       {"uuid", d.uuid},
                       {"compute_capability", cc_string(d.cc)},
                       {"multiprocessors", d.multiprocessors},
                       {"memory_total_bytes", d.memory_total}});
  for (const auto& r : results) rs.push_back(result_json(r));
  json j = {{"gpuenv_version", GPUENV_VERSION},
            {"machine", info.machine},
            {"fingerprint", info.fingerprint},
            {"started_at", info.started_at},
            {"seconds", info.seconds},
            {"store", info.store_path ? json(*info.store_path) : json(nullptr)},
            {"run_id", info.run_id ? json(*info.run_id) : json(nullptr)},
            {"devices", devices},
            {"results", rs}};
  return j;
}

json report_json(const ResultsReport& r) { return results_json(r.info, r.results); }
std::string report_text(const ResultsReport& r, const Style& style) { return render_results(r.info, r.results, style); }

std::string render_history(const std::string& machine, const std::vector<store::HistoryRow>& rows) {
  if (rows.empty())
    return "gpuenv bench --history: nothing stored yet for " + printable(machine) + "; run gpuenv bench\n";
  std::map<std::string, std::vector<const store::HistoryRow*>> by_case;
  for (const auto& r : rows) by_case[history_key(r.m)].push_back(&r);
  std::string out = "gpuenv bench --history: " + printable(machine) + "\n";
  for (const auto& [key, list] : by_case) {
    out += fmt::format("\n{}\n", printable(key));
    for (const auto* r : list) {
      const Measurement& m = r->m;
      std::string value = m.value ? format_value(*m.value, m.unit) : "failed";
      auto pct = m.percent_of_peak();
      out +=
          fmt::format("  {:<21} {:<7} {:<6} {:>16} {:>6}  {}\n", printable(m.measured_at),
                      printable(m.gpuenv_version.value_or("?")), printable(r->command), printable(value),
                      pct ? fmt::format("{:.0f} %", *pct) : "", m.ok() ? "" : printable(m.detail));
    }
  }
  return out;
}

json report_json(const HistoryReport& h) {
  json a = json::array();
  for (const auto& r : h.rows) {
    json m = measurement_json(r.m);
    m["run_id"] = r.run_id;
    m["command"] = r.command;
    a.push_back(std::move(m));
  }
  return {{"machine", h.machine}, {"fingerprint", h.fingerprint}, {"measurements", a}};
}

std::string report_text(const HistoryReport& h, const Style&) { return render_history(h.machine, h.rows); }

std::string progress_line(size_t index, size_t count, const Planned& p) {
  std::string where = p.c.scope == CaseScope::kAll
                          ? "all GPUs"
                          : "GPU " + std::to_string(p.target.devices.empty() ? 0 : p.target.devices[0].ordinal);
  if (p.c.scope == CaseScope::kPair && p.target.devices.size() == 2)
    where += "->" + std::to_string(p.target.devices[1].ordinal);
  return fmt::format("[{}/{}] {}: {} ({})", index + 1, count, where, p.c.key, p.c.description);
}

}  // namespace gpuenv::bench
