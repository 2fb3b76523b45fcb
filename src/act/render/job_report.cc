#include "act/render/job_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "act/render/memory_report.h"
#include "act/render/printable.h"
#include "decide/run/peak_memory.h"
#include "model/job_json.h"
#include "model/json_opt.h"
#include "sys/text.h"

namespace gpuenv {
namespace {

using nlohmann::json;

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string pad(std::string s, std::size_t w) {
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s;
}

// Each point's mean of metric m (nullopt when the bucket had none).
std::vector<std::optional<double>> series(const Job& job, Metric m, double scale = 1) {
  std::vector<std::optional<double>> out;
  for (const auto& p : job.timeline.points())
    out.push_back(p.s[m].n ? std::optional<double>(p.s[m].mean * scale) : std::nullopt);
  return out;
}

double memory_top_gib(const Job& job) {
  double cap = 0;
  for (const auto& g : job.context.gpus) cap += g.memory_total_mib.value_or(0);
  Stat peak = job.timeline.totals()[kMemMib];
  return std::max(cap, peak.n ? peak.max : 0.0) / 1024;
}

// Text for an SVG: printable() (no control character, valid UTF-8), the XML
// specials, and U+FFFE and U+FFFF, which XML 1.0 does not allow
// (xmllint: "Char 0xFFFE out of allowed range"), written as \ufffe.
std::string xml_escape(const std::string& s) {
  std::string out, text = printable(s);
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    bool nonchar = text.compare(i, 2, "\xef\xbf") == 0 && i + 2 < text.size() &&
                   (text[i + 2] == '\xbe' || text[i + 2] == '\xbf');
    if (nonchar) {
      out += text[i + 2] == '\xbe' ? "\\ufffe" : "\\uffff";
      i += 2;
      continue;
    }
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string steps_cell(const Job& j, const FirstRuns& firsts);

std::string exit_text(int code) { return code > 128 ? std::to_string(code) + " (signal " + std::to_string(code - 128) + ")" : std::to_string(code); }

}  // namespace

std::optional<double> speedup(const Job& job, const FirstRuns& firsts) {
  auto it = firsts.find(job.command_fp);
  if (!job.speed || !job.speed->steps_per_s || it == firsts.end() || !it->second.speed ||
      !it->second.speed->steps_per_s || *it->second.speed->steps_per_s <= 0)
    return std::nullopt;
  return *job.speed->steps_per_s / *it->second.speed->steps_per_s;
}

std::string speed_text(const Job& job, const FirstRuns& firsts) {
  if (!job.speed) return "";
  const JobSpeed& s = *job.speed;
  std::vector<std::string> parts;
  if (s.steps_per_s) {
    std::string p = fmt("%.2f steps/s", *s.steps_per_s);
    auto up = speedup(job, firsts);
    if (up && firsts.at(job.command_fp).id != job.id)
      p += fmt(" (%.2fx", *up) + " job " + std::to_string(firsts.at(job.command_fp).id) + ", the command's first run)";
    parts.push_back(p);
  }
  if (s.batches_per_s) parts.push_back(fmt("%.2f batches/s", *s.batches_per_s));
  if (s.data_wait_share) parts.push_back(fmt("waiting for data %.0f%% of the loop", 100 * *s.data_wait_share));
  if (s.first_step_s) parts.push_back("first step after " + human_duration(*s.first_step_s));
  if (s.exit_tail_s) parts.push_back(human_duration(*s.exit_tail_s) + " from the last step to the exit");
  if (parts.empty()) parts.push_back(std::to_string(s.steps) + " steps, " + std::to_string(s.batches) + " batches");
  return join(parts, ", ");
}

namespace {

double in_gib(double bytes) { return bytes / (1024.0 * 1024 * 1024); }

const PlannedPeak* plan_of(const Job& job, const PlannedPeaks& plans) {
  auto it = plans.find(job.id);
  return it == plans.end() ? nullptr : &it->second;
}

std::optional<double> error_pct(const Job& job, const PlannedPeak* plan) {
  if (!plan || !job.peak_memory) return std::nullopt;
  return plan_error_pct(double(job.peak_memory->bytes), plan->peak_bytes);
}

std::string error_text(double pct) {
  if (std::fabs(pct) < 0.05) return "measured as planned";
  return pct > 0 ? fmt("measured +%.1f %% over the plan", pct) : fmt("measured %.1f %% under the plan", -pct);
}

}  // namespace

std::string peak_memory_text(const Job& job, const PlannedPeaks& plans) {
  const PlannedPeak* plan = plan_of(job, plans);
  std::string out;
  if (job.peak_memory) out = fmt("peak memory %.1f GiB", in_gib(double(job.peak_memory->bytes))) + " (" + job.peak_memory->source + ")";
  if (!plan) return out;
  out += (out.empty() ? "peak memory not measured, planned " : ", planned ") + fmt("%.1f GiB", in_gib(plan->peak_bytes));
  if (!plan->gpu.empty()) out += " for " + plan->gpu;
  if (auto pct = error_pct(job, plan)) out += ": " + error_text(*pct);
  if (job.peak_memory && job.peak_memory->source == "nvml")
    out += " (NVML's figure counts the CUDA context and the allocator's cached blocks, which the plan leaves out)";
  return out;
}

namespace {
std::string steps_cell(const Job& j, const FirstRuns& firsts) {
  if (!j.speed || !j.speed->steps_per_s) return "-";
  std::string cell = fmt("%.2f", *j.speed->steps_per_s);
  if (auto up = speedup(j, firsts)) cell += fmt(" (%.2fx)", *up);
  return cell;
}
}  // namespace

std::string human_duration(double s) {
  if (s < 60) return fmt("%.1f s", s);
  long t = std::lround(s);
  char buf[48];
  if (t < 3600) std::snprintf(buf, sizeof buf, "%ld min %02ld s", t / 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%ld h %02ld min", t / 3600, t % 3600 / 60);
  return buf;
}

std::string command_text(const std::vector<std::string>& argv, std::size_t max) {
  std::vector<std::string> words;
  for (const auto& a : argv)
    words.push_back(a.find_first_of(" \t'\"") == std::string::npos && !a.empty() ? a : "'" + a + "'");
  std::string s = printable(join(words, " "));
  if (s.size() > max && max > 3) s = std::string(utf8_prefix(s, max - 3)) + "...";
  return s;
}

std::string sparkline(const std::vector<std::optional<double>>& values, double top, std::size_t width, bool utf8) {
  static const char* const kBlocks[] = {"\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588"};
  static const char kAscii[] = "_.-=+*#@";
  std::string out;
  std::size_t n = values.size(), cols = std::min(width, n);
  for (std::size_t c = 0; c < cols; ++c) {
    double sum = 0;
    int k = 0;
    for (std::size_t i = c * n / cols; i < (c + 1) * n / cols; ++i)
      if (values[i]) sum += *values[i], ++k;
    if (k == 0) {
      out += ' ';
      continue;
    }
    double f = top > 0 ? std::clamp(sum / k / top, 0.0, 1.0) : 0;
    int level = std::min(7, int(f * 8));
    if (utf8) out += kBlocks[level];
    else out += kAscii[level];
  }
  return out;
}

std::string render_jobs_table(const std::vector<Job>& jobs, const FirstRuns& firsts) {
  if (jobs.empty()) return "No watched jobs yet: run one with `gpuenv run -- COMMAND`.\n";
  std::string out = pad("ID", 6) + pad("WHEN", 22) + pad("COMMAND", 42) + pad("DURATION", 14) + pad("EXIT", 6) +
                    pad("STEPS/S", 18) + "VERDICT\n";
  for (const auto& j : jobs) {
    std::string verdict = main_verdict(j).name;
    std::string id = std::to_string(j.id) + (j.rank ? "/" + std::to_string(*j.rank) : "");
    out += pad(id, 6) + pad(printable(j.started_at), 22) + pad(command_text(j.argv, 40), 42) +
           pad(human_duration(j.duration_s), 14) + pad(std::to_string(j.exit_code), 6) + pad(steps_cell(j, firsts), 18) +
           verdict + "\n";
  }
  return out;
}

std::string render_job(const Job& job, const std::vector<Verdict>& verdicts, bool utf8, const FirstRuns& firsts,
                       const PlannedPeaks& plans) {
  std::string out = "Job " + std::to_string(job.id) + ": " + command_text(job.argv, 200) + "\n";
  out += "  started " + printable(job.started_at) + " in " + printable(job.cwd) + ", ran " +
         human_duration(job.duration_s) + ", exit " + exit_text(job.exit_code);
  if (job.rank) out += ", rank " + std::to_string(*job.rank);
  out += "\n";
  std::vector<std::string> gpus;
  for (const auto& g : job.context.gpus) gpus.push_back(printable(g.name.value_or(g.uuid)));
  out += "  watched: " + (gpus.empty() ? "no GPU (" + printable(job.context.unwatched) + ")" : join(gpus, ", ")) +
         ", every " + fmt("%.1f", job.context.interval_s) + " s\n";
  if (std::string sp = speed_text(job, firsts); !sp.empty()) out += "  speed: " + printable(sp) + "\n";
  if (std::string peak = peak_memory_text(job, plans); !peak.empty()) out += "  " + printable(peak) + "\n";
  std::string tuned = job.tuned;
  if (!job.context.precision.empty())
    tuned += (tuned.empty() ? "" : ", ") + job.context.precision + " autocast (--tune=+precision, docs/precision.md)";
  if (!tuned.empty()) out += "  tuned: " + printable(tuned) + "\n";
  out += "\n";
  for (std::size_t i = 0; i < verdicts.size(); ++i) {
    const Verdict& v = verdicts[i];
    out += (i == 0 ? "Verdict: " : "Also: ") + v.name + "\n  " + v.evidence + "\n  fix: " + v.fix + "\n";
  }
  Stat util = job.timeline.totals()[kUtilPct], mem = job.timeline.totals()[kMemMib];
  double top = memory_top_gib(job);
  out += "\n";
  if (util.n)
    out += "  utilisation " + sparkline(series(job, kUtilPct), 100, 60, utf8) + fmt("  mean %.0f%%", util.mean) +
           fmt(", max %.0f%%\n", util.max);
  if (mem.n)
    out += "  GPU memory  " + sparkline(series(job, kMemMib, 1.0 / 1024), top, 60, utf8) +
           fmt("  peak %.1f", mem.max / 1024) + fmt(" of %.1f GiB\n", top);
  if (!util.n && !mem.n) out += "  (no GPU samples)\n";
  return out;
}

std::string job_svg(const Job& job, const std::vector<Verdict>& verdicts, const FirstRuns& firsts) {
  const double W = 800, H = 360, L = 60, R = 60, T = 50, B = 50;
  const double pw = W - L - R, ph = H - T - B;
  const auto& pts = job.timeline.points();
  double t_end = std::max(1.0, pts.empty() ? job.duration_s : pts.back().t1);
  double mem_top = std::max(1.0, memory_top_gib(job));
  auto x = [&](double t) { return L + pw * std::clamp(t / t_end, 0.0, 1.0); };
  auto line = [&](Metric m, double scale, double top) {
    std::string d;
    for (const auto& p : pts) {
      if (!p.s[m].n) continue;
      double y = T + ph * (1 - std::clamp(p.s[m].mean * scale / top, 0.0, 1.0));
      d += (d.empty() ? "M" : " L") + fmt("%.1f", x((p.t0 + p.t1) / 2)) + "," + fmt("%.1f", y);
    }
    return d;
  };
  std::string title = "Job " + std::to_string(job.id) + ": " + command_text(job.argv, 60) + ": " +
                      (verdicts.empty() ? "" : verdicts[0].name);
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"800\" height=\"360\" viewBox=\"0 0 800 360\" "
                  "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"800\" height=\"360\" fill=\"white\"/>\n";
  s += "<text x=\"400\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">" + xml_escape(title) + "</text>\n";
  for (int i = 0; i <= 4; ++i) {  // grid and both y axes' ticks
    double y = T + ph * i / 4.0;
    s += "<line x1=\"" + fmt("%.0f", L) + "\" y1=\"" + fmt("%.1f", y) + "\" x2=\"" + fmt("%.0f", L + pw) + "\" y2=\"" +
         fmt("%.1f", y) + "\" stroke=\"#ddd\"/>\n";
    s += "<text x=\"" + fmt("%.0f", L - 6) + "\" y=\"" + fmt("%.1f", y + 4) + "\" text-anchor=\"end\">" +
         fmt("%.0f%%", 100 - 25.0 * i) + "</text>\n";
    s += "<text x=\"" + fmt("%.0f", L + pw + 6) + "\" y=\"" + fmt("%.1f", y + 4) + "\">" +
         fmt("%.1f", mem_top * (4 - i) / 4) + "</text>\n";
  }
  for (int i = 0; i <= 5; ++i) {
    double t = t_end * i / 5;
    s += "<text x=\"" + fmt("%.1f", x(t)) + "\" y=\"" + fmt("%.0f", T + ph + 18) + "\" text-anchor=\"middle\">" +
         xml_escape(human_duration(t)) + "</text>\n";
  }
  s += "<rect x=\"" + fmt("%.0f", L) + "\" y=\"" + fmt("%.0f", T) + "\" width=\"" + fmt("%.0f", pw) + "\" height=\"" +
       fmt("%.0f", ph) + "\" fill=\"none\" stroke=\"#444\"/>\n";
  s += "<text x=\"400\" y=\"" + fmt("%.0f", H - 8) + "\" text-anchor=\"middle\">time since start</text>\n";
  s += "<text transform=\"translate(16 " + fmt("%.0f", T + ph / 2) + ") rotate(-90)\" text-anchor=\"middle\" "
       "fill=\"#1f77b4\">GPU utilisation (%)</text>\n";
  s += "<text transform=\"translate(" + fmt("%.0f", W - 12) + " " + fmt("%.0f", T + ph / 2) +
       ") rotate(90)\" text-anchor=\"middle\" fill=\"#d62728\">job GPU memory (GiB)</text>\n";
  s += "<path d=\"" + line(kUtilPct, 1, 100) + "\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\"/>\n";
  s += "<path d=\"" + line(kMemMib, 1.0 / 1024, mem_top) + "\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\"/>\n";
  s += "<text x=\"" + fmt("%.0f", L + 8) + "\" y=\"" + fmt("%.0f", T + 16) + "\" fill=\"#1f77b4\">utilisation</text>\n";
  s += "<text x=\"" + fmt("%.0f", L + 100) + "\" y=\"" + fmt("%.0f", T + 16) + "\" fill=\"#d62728\">memory</text>\n";
  if (!verdicts.empty())
    s += "<text x=\"" + fmt("%.0f", L) + "\" y=\"" + fmt("%.0f", T - 8) + "\" font-size=\"11\" fill=\"#555\">" +
         xml_escape(std::string(utf8_prefix(verdicts[0].evidence, 120))) + "</text>\n";
  if (std::string sp = speed_text(job, firsts); !sp.empty())
    s += "<text x=\"" + fmt("%.0f", L) + "\" y=\"" + fmt("%.0f", T + 32) + "\" font-size=\"11\" fill=\"#2ca02c\">speed: " +
         xml_escape(std::string(utf8_prefix(sp, 120))) + "</text>\n";
  return s + "</svg>\n";
}

json verdict_json(const Verdict& v) {
  return {{"name", v.name}, {"evidence", v.evidence}, {"fix", v.fix}, {"figures", v.figures}, {"tune", v.tune}};
}

namespace {

// planned_peak_bytes, plan_error_pct and memory_plan of `job`: null without a plan.
// The plan's peak as plan-memory --json printed it (the store keeps a REAL).
void add_plan(const Job& job, const PlannedPeaks& plans, json* j) {
  const PlannedPeak* plan = plan_of(job, plans);
  const json peak = plan ? json(plan_bytes(plan->peak_bytes)) : json(nullptr);
  (*j)["planned_peak_bytes"] = peak;
  (*j)["plan_error_pct"] = opt(error_pct(job, plan));
  (*j)["memory_plan"] =
      plan ? json{{"peak_bytes", peak}, {"gpu", plan->gpu}, {"flags", plan->flags}, {"planned_at", plan->planned_at}}
           : json(nullptr);
}

}  // namespace

json jobs_json(const std::vector<Job>& jobs, const FirstRuns& firsts, const PlannedPeaks& plans) {
  json list = json::array();
  for (const auto& j : jobs) {
    json e = job_to_json(j, false);
    e.erase("plan");
    e["verdict"] = verdict_json(verdicts_of(j)[0]);
    e["speedup"] = opt(speedup(j, firsts));
    add_plan(j, plans, &e);
    list.push_back(e);
  }
  return {{"jobs", list}};
}

json job_report_json(const Job& job, const std::vector<Verdict>& verdicts, const FirstRuns& firsts,
                     const PlannedPeaks& plans) {
  json j = job_to_json(job, true);
  j["speedup"] = opt(speedup(job, firsts));
  add_plan(job, plans, &j);
  json vs = json::array();
  for (const auto& v : verdicts) vs.push_back(verdict_json(v));
  j["verdict"] = verdicts.empty() ? json(nullptr) : verdict_json(verdicts[0]);
  j["verdicts"] = vs;
  return j;
}

nlohmann::json report_json(const JobReport& r) { return job_report_json(r.job, r.verdicts, r.firsts, r.plans); }
std::string report_text(const JobReport& r, const Style&) {
  return render_job(r.job, r.verdicts, r.utf8, r.firsts, r.plans);
}

nlohmann::json report_json(const JobsReport& r) { return jobs_json(r.jobs, r.firsts, r.plans); }
std::string report_text(const JobsReport& r, const Style&) { return render_jobs_table(r.jobs, r.firsts); }

}  // namespace gpuenv
