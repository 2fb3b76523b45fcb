#include "act/render/fleet_job_report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "act/render/job_report.h"
#include "act/render/printable.h"
#include "model/json_opt.h"
#include "sys/bytes.h"
#include "sys/text.h"

namespace gpuenv {
namespace {

using nlohmann::json;
using fleet::GpuUse;
using fleet::JobSummary;

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string when(double t) { return utc_time(static_cast<std::time_t>(std::floor(t))); }

std::string ratio_text(const std::optional<double>& r) { return r ? fmt("%.0f %%", *r * 100) : "-"; }

// 1234567 J -> "1,235 kJ"; the thousands grouped for the eye.
std::string kj_text(double joules) {
  std::string digits = fmt("%.0f", joules / 1000);
  for (int at = static_cast<int>(digits.size()) - 3; at > 0 && std::isdigit(static_cast<unsigned char>(digits[at - 1])); at -= 3)
    digits.insert(static_cast<std::size_t>(at), ",");
  return digits + " kJ";
}

std::string energy_text(const JobSummary& s) {
  if (!s.energy_j) return "unknown: no energy series (MIG devices and GPUs before Volta have none)";
  std::string out = kj_text(*s.energy_j) + " (" + fmt("%.3f kWh", *s.energy_j / 3.6e6) + ")";
  return s.energy_estimate ? out + ", an estimate: a GPU was shared with another job" : out;
}

// "1001 (slurm)", "ml/train-0 (kubernetes: pod ml/train-0, container trainer)",
// "pid-4343 (no scheduler: python3)"; then the user.
std::string job_line(const JobSummary& s) {
  std::string what = s.scheduler.empty() ? "unknown scheduler" : s.scheduler;
  if (s.scheduler == "none") what = "no scheduler";
  std::string detail;
  if (!s.pod.empty()) detail += "pod " + (s.ns.empty() ? "" : s.ns + "/") + s.pod;
  if (!s.container.empty()) detail += ", container " + s.container;
  if (!s.command.empty()) detail += (detail.empty() ? "" : ", ") + std::string("command ") + s.command;
  if (!detail.empty()) what += ": " + detail;
  std::string user = s.user.empty() ? "user unknown" : "user " + s.user;
  return printable("Job " + s.job + " (" + what + "), " + user) + "\n";
}

std::string field(const std::string& name, const std::string& value) {
  std::string out = "  " + name;
  out.resize(std::max<std::size_t>(out.size() + 1, 14), ' ');
  return out + value + "\n";
}

std::string cpu_text(const fleet::NodeCpu& c) {
  std::string out = printable(c.node) + ": ";
  if (c.cores_used) out += fmt("%.1f", *c.cores_used);
  else out += "?";
  if (c.cores_allowed) out += " of " + fmt("%.0f", *c.cores_allowed);
  out += " cores used";
  if (c.cores_used && c.cores_allowed && *c.cores_allowed > 0)
    out += " (" + fmt("%.0f %%", *c.cores_used / *c.cores_allowed * 100) + ")";
  if (c.processes) out += ", " + fmt("%.0f", *c.processes) + " processes at most";
  return out;
}

std::string head(const JobSummary& s, const FleetReportSource& src) {
  std::string out = job_line(s);
  out += field("Prometheus", printable(src.prometheus) + ", window " + when(src.window_start) + " to " + when(src.window_end));
  out += field("Started", when(s.start));
  out += field(s.running ? "Running" : "Ended", when(s.end) + " (last sample)");
  out += field("Duration", human_duration(s.end - s.start));
  std::vector<std::string> nodes;
  for (const auto& n : s.nodes) nodes.push_back(printable(n));
  out += field("Nodes", join(nodes, ", "));
  out += field("GPU-hours", fmt("%.2f", s.gpu_hours) + " on " + std::to_string(s.gpus.size()) +
                                (s.gpus.size() == 1 ? " GPU" : " GPUs"));
  out += field("Energy", energy_text(s));
  for (const auto& c : s.cpu)
    if (c.cores_used || c.cores_allowed || c.processes) out += field("CPU", cpu_text(c));
  return out;
}

// ---- the GPU table

using Row = std::vector<std::string>;

std::string table(const std::vector<Row>& rows) {
  std::vector<std::size_t> width;
  for (const Row& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) {
      width.resize(std::max(width.size(), r.size()));
      width[i] = std::max(width[i], r[i].size());
    }
  std::string out;
  for (const Row& r : rows) {
    std::string line;
    for (std::size_t i = 0; i < r.size(); ++i) line += "  " + r[i] + std::string(width[i] - r[i].size(), ' ');
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

Row gpu_row(const GpuUse& g) {
  std::string gpu = g.mig.empty() ? g.gpu : g.gpu + " MIG " + g.mig;
  std::string energy = g.energy_j ? kj_text(*g.energy_j) + (g.shared ? " (estimate)" : "") : "-";
  std::string memory = g.memory_peak_bytes ? human_bytes(static_cast<std::uint64_t>(*g.memory_peak_bytes)) : "-";
  return {printable(g.node), printable(gpu), printable(g.uuid), human_duration(g.held_s),
          ratio_text(g.utilization), ratio_text(g.sm_active), ratio_text(g.tensor_active), memory, energy};
}

std::string gpus(const JobSummary& s) {
  std::vector<Row> rows = {{"NODE", "GPU", "UUID", "HELD", "UTIL", "SM", "TENSOR", "MEM PEAK", "ENERGY"}};
  for (const GpuUse& g : s.gpus) rows.push_back(gpu_row(g));
  return "\nGPUs (mean utilisation and SM/tensor activity; SM and tensor need Hopper or later)\n" + table(rows);
}

std::string verdicts(const JobSummary& s) {
  if (s.verdicts.empty()) return "";
  bool nodes = s.nodes.size() > 1;
  std::vector<Row> rows;
  for (const auto& v : s.verdicts) {
    Row r = {when(v.from), "to", when(v.to), "(" + human_duration(v.to - v.from) + ")", printable(v.verdict)};
    if (nodes) r.insert(r.begin(), printable(v.node));
    rows.push_back(r);
  }
  std::string out = "\nVerdicts\n" + table(rows);
  if (s.main_verdict.empty()) return out;
  out += "Main verdict: " + printable(s.main_verdict) + ", " + human_duration(s.main_verdict_s) + "\n";
  if (!s.main_fix.empty()) out += "  Fix: " + printable(s.main_fix) + "\n";
  return out;
}

std::string notes(const JobSummary& s) {
  if (s.notes.empty()) return "";
  std::string out = "\nNotes\n";
  for (const auto& n : s.notes) out += "  * " + printable(n) + "\n";
  return out;
}

// ---- JSON

json text_or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

json gpu_json(const GpuUse& g) {
  return {{"node", g.node},
          {"gpu", g.gpu},
          {"uuid", g.uuid},
          {"mig", text_or_null(g.mig)},
          {"first", g.first},
          {"last", g.last},
          {"held_s", g.held_s},
          {"gpu_hours", g.held_s / 3600},
          {"energy_j", opt(g.energy_j)},
          {"shared", g.shared},
          {"utilization", opt(g.utilization)},
          {"utilization_max", opt(g.utilization_max)},
          {"sm_active", opt(g.sm_active)},
          {"tensor_active", opt(g.tensor_active)},
          {"fp32_active", opt(g.fp32_active)},
          {"fp16_active", opt(g.fp16_active)},
          {"memory_peak_bytes", opt(g.memory_peak_bytes)}};
}

json verdicts_json(const JobSummary& s) {
  json out = json::array();
  for (const auto& v : s.verdicts)
    out.push_back({{"node", v.node}, {"from", v.from}, {"to", v.to}, {"duration_s", v.to - v.from},
                   {"verdict", v.verdict}, {"fix", v.fix}});
  return out;
}

json cpu_json(const JobSummary& s) {
  json out = json::array();
  for (const auto& c : s.cpu)
    out.push_back({{"node", c.node}, {"cores_used", opt(c.cores_used)}, {"cores_allowed", opt(c.cores_allowed)},
                   {"processes", opt(c.processes)}});
  return out;
}

}  // namespace

std::string render_fleet_job(const JobSummary& s, const FleetReportSource& source) {
  return head(s, source) + gpus(s) + verdicts(s) + notes(s);
}

json fleet_job_json(const JobSummary& s, const FleetReportSource& source) {
  json j = {{"job", s.job},
            {"source", {{"prometheus", source.prometheus}, {"window_start", source.window_start},
                        {"window_end", source.window_end}}},
            {"scheduler", text_or_null(s.scheduler)},
            {"user", text_or_null(s.user)},
            {"namespace", text_or_null(s.ns)},
            {"pod", text_or_null(s.pod)},
            {"container", text_or_null(s.container)},
            {"command", text_or_null(s.command)},
            {"nodes", s.nodes},
            {"start", s.start},
            {"end", s.end},
            {"duration_s", s.end - s.start},
            {"running", s.running},
            {"began_before_window", s.began_before_window},
            {"gpu_hours", s.gpu_hours},
            {"energy_j", opt(s.energy_j)},
            {"energy_kwh", s.energy_j ? json(*s.energy_j / 3.6e6) : json(nullptr)},
            {"energy_estimate", s.energy_estimate},
            {"cpu", cpu_json(s)},
            {"verdicts", verdicts_json(s)},
            {"notes", s.notes}};
  j["gpus"] = json::array();
  for (const GpuUse& g : s.gpus) j["gpus"].push_back(gpu_json(g));
  j["main_verdict"] = s.main_verdict.empty() ? json(nullptr)
                                             : json{{"verdict", s.main_verdict}, {"duration_s", s.main_verdict_s},
                                                    {"fix", s.main_fix}};
  return j;
}

nlohmann::json report_json(const FleetJobReport& r) { return fleet_job_json(r.summary, r.source); }
std::string report_text(const FleetJobReport& r, const Style&) { return render_fleet_job(r.summary, r.source); }

}  // namespace gpuenv
