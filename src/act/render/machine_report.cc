#include "act/render/machine_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "act/render/feedback_report.h"
#include "decide/arch.h"
#include "decide/launcher_env.h"
#include "decide/health.h"
#include "model/snapshot.h"

namespace gpuenv {
namespace {

const char* kBold = "\033[1m";
const char* kYellow = "\033[33m";
const char* kRed = "\033[31m";
const char* kReset = "\033[0m";

std::string paint(const Style& st, const char* code, const std::string& s) {
  return st.color ? code + s + kReset : s;
}

std::string opt_str(const std::optional<std::string>& s, const char* unknown = "?") {
  return s ? printable(*s) : unknown;
}

std::string cc_str(const std::optional<ComputeCapability>& cc) {
  return cc ? cc_string(*cc) : "?";
}

std::string cuda_version_str(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

std::string problem_lines(const Style& st, const Problem& p, const std::string& indent) {
  std::string out = indent + paint(st, kYellow, "problem: ") + printable(p.message) + "\n";
  if (!p.fix.empty()) out += indent + "  fix: " + printable(p.fix) + "\n";
  return out;
}

std::string gpu_line(const Style& st, const Gpu& g) {
  std::string family = g.compute_capability ? family_name(*g.compute_capability) : "unknown";
  std::string mem = g.memory_total_bytes ? human_bytes(*g.memory_total_bytes) : "? memory";
  std::string line = fmt::format("GPU {}  {}  cc {}  {}  {}", g.index, paint(st, kBold, opt_str(g.name)),
                                 cc_str(g.compute_capability), family, mem);
  if (g.pci_bus_id) line += "  " + printable(*g.pci_bus_id);
  if (g.mig_enabled.value_or(false)) line += "  MIG on";
  if (g.problem) line += "  " + paint(st, kYellow, "failed");
  std::string out = line + "\n";
  for (const auto& d : g.mig_devices)
    out += fmt::format("  MIG {}  {}  {}  {}\n", d.index, opt_str(d.name), printable(d.uuid),
                       d.memory_total_bytes ? human_bytes(*d.memory_total_bytes) : "?");
  return out;
}

std::string driver_line(const Machine& m) {
  if (!m.nvidia.driver_version && !m.nvidia.cuda_driver_version) return "NVIDIA driver: not found\n";
  std::string out = "NVIDIA driver " + opt_str(m.nvidia.driver_version);
  if (m.nvidia.cuda_driver_version)
    out += ", supports CUDA " + cuda_version_str(*m.nvidia.cuda_driver_version);
  return out + "\n";
}

std::string host_line(const Host& h) {
  std::vector<std::string> parts;
  if (h.usable_cpus && h.online_cpus)
    parts.push_back(fmt::format("{} of {} CPUs usable", *h.usable_cpus, *h.online_cpus));
  if (!h.numa_nodes.empty()) parts.push_back(fmt::format("{} NUMA node(s)", h.numa_nodes.size()));
  if (h.cgroup_memory_limit_bytes)
    parts.push_back("memory limit " + human_bytes(*h.cgroup_memory_limit_bytes));
  else if (h.memory_total_bytes)
    parts.push_back("memory " + human_bytes(*h.memory_total_bytes));
  if (h.shm_bytes) parts.push_back("/dev/shm " + human_bytes(*h.shm_bytes));
  parts.push_back(h.container ? "in a " + printable(*h.container) + " container" : "not in a container");
  std::string out = "Host:";
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : " ") + parts[i];
  return out + "\n";
}

nlohmann::ordered_json optional_int(const std::optional<int>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

// The engine whose ranks apply, what it says, and every engine recognised.
nlohmann::ordered_json launcher_json(const LaunchEnv& l) {
  using nlohmann::ordered_json;
  if (l.seen.empty()) return nullptr;
  ordered_json seen = ordered_json::array();
  for (const auto& s : l.seen) seen.push_back({{"engine", engine_id(s.engine)}, {"name", s.name}, {"variables", s.vars}});
  return {{"engine", engine_id(l.engine)},
          {"summary", launch_summary(l)},
          {"rank", optional_int(l.rank)},
          {"local_rank", optional_int(l.local_rank)},
          {"local_world_size", optional_int(l.local_world_size)},
          {"world_size", optional_int(l.world_size)},
          {"node_rank", optional_int(l.node_rank)},
          {"nnodes", optional_int(l.nnodes)},
          {"gpus_bound", l.bound_gpus ? ordered_json(*l.bound_gpus) : ordered_json(nullptr)},
          {"gpus_bound_by", l.bound_gpus ? ordered_json(l.bound_by) : ordered_json(nullptr)},
          {"recognised", seen}};
}

}  // namespace

std::string cpu_list(const std::vector<int>& cpus_in) {
  std::vector<int> cpus = cpus_in;
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += j == i ? std::to_string(cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return out;
}

namespace {

// What detect says without a GPU: none here, or none readable.
std::string no_gpu_line(const Machine& m) {
  if (driver_needs_reload(m))
    return "NVIDIA GPUs unreadable: the driver was upgraded but the old kernel module is still loaded, so no GPU "
           "can be read (nor used by PyTorch) until a reboot or a reload of the nvidia modules (the problem below "
           "says how).\n";
  if (gpus_unreadable(m))
    return "NVIDIA GPUs unreadable: the driver failed (the problem below), so whether there are GPUs here, and "
           "which, is unknown until it is fixed; until then PyTorch sees none.\n";
  return "No NVIDIA GPU found: PyTorch will run on the CPU.\n";
}

}  // namespace

std::string render_detect(const Machine& m, const Style& st) {
  std::string out = driver_line(m);
  for (const auto& g : m.gpus) out += gpu_line(st, g);
  if (m.gpus.empty()) out += no_gpu_line(m);
  out += host_line(m.host);
  if (m.torch)
    out += "PyTorch " + printable(m.torch->version) +
           (m.torch->cuda_version ? " (CUDA " + printable(*m.torch->cuda_version) + ")" : " (CPU only)") +
           "\n";
  return out;
}

namespace {

LogEvent problem_event(const Style& st, Severity level, const Problem& p, const Gpu* g) {
  nlohmann::ordered_json f = {{"source", p.source}, {"code", p.code}};
  if (g) f["gpu"] = g->index;
  f["message"] = p.message;
  f["fix"] = p.fix;
  std::string text = problem_lines(st, p, g ? "GPU " + std::to_string(g->index) + ": " : "");
  return {level, "problem", text, f, LogEvent::Form::kVerbatim};
}

}  // namespace

std::vector<LogEvent> problem_events(const Machine& m, const Style& st) {
  Severity nvidia = driver_fails(m) ? Severity::kError : Severity::kWarning;
  std::vector<LogEvent> out;
  for (const auto& p : m.nvidia.problems) out.push_back(problem_event(st, nvidia, p, nullptr));
  for (const auto& g : m.gpus)
    if (g.problem) out.push_back(problem_event(st, nvidia, *g.problem, &g));
  for (const auto& p : m.host.problems) out.push_back(problem_event(st, Severity::kWarning, p, nullptr));
  return out;
}

std::string render_problems(const Machine& m, const Style& st) {
  std::string out;
  for (const auto& e : problem_events(m, st)) out += e.text;
  return out;
}

namespace {

std::size_t code_points(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// Narrower than this, a wrapped WHY column would be harder to read than
// the terminal's own wrapping.
constexpr std::size_t kMinWhyColumns = 20;

// WHY for a row whose WHY starts at column `start` (past a long value) and
// whose continuation lines start at `indent`.
std::string why_cell(const std::string& why, std::size_t start, std::size_t indent, std::size_t columns) {
  if (columns == 0) return why;
  std::size_t width = std::max(columns > indent ? columns - indent : 0, kMinWhyColumns);
  std::size_t first = std::max(columns > start ? columns - start : 0, kMinWhyColumns);
  std::string out;
  for (const auto& line : wrap_words(why, first, width))
    out += (out.empty() ? "" : "\n" + std::string(indent, ' ')) + line;
  return out;
}

// The widest a VALUE cell gets: 40 columns, and on a terminal at most two
// fifths of what the SETTING column leaves (at least 12), so WHY keeps room.
std::size_t value_column_cap(std::size_t name_w, std::size_t columns) {
  if (columns == 0) return 40;
  std::size_t rest = columns > name_w + 4 ? columns - name_w - 4 : 0;
  return std::clamp<std::size_t>(rest * 2 / 5, 12, 40);
}

// The first code point of `s` at or after byte `at`.
std::size_t code_point_start(std::string_view s, std::size_t at) {
  while (at < s.size() && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) ++at;
  return at;
}

// `s` (more than `width` code points) as `width` of them: its head, an
// ellipsis, and its tail, which in a path or a list is what tells it apart.
std::string shorten_middle(const std::string& s, std::size_t width) {
  if (width < 3) return s;
  std::size_t head = (width - 1) / 3, tail = width - 1 - head;
  std::size_t head_end = 0, tail_start = s.size();
  for (std::size_t n = 0; n < head; ++n) head_end = code_point_start(s, head_end + 1);
  for (std::size_t n = 0; n < tail; ++n) {
    do --tail_start;
    while (tail_start > 0 && (static_cast<unsigned char>(s[tail_start]) & 0xC0) == 0x80);
  }
  return s.substr(0, head_end) + "\u2026" + s.substr(tail_start);
}

}  // namespace

std::vector<std::string> wrap_words(std::string_view text, std::size_t first, std::size_t width) {
  std::vector<std::string> lines(1);
  std::size_t used = 0, limit = first;  // code points on lines.back(), and its limit
  bool fresh = true;                    // no word on lines.back() yet
  for (std::size_t i = 0; i <= text.size();) {
    std::size_t end = std::min(text.find(' ', i), text.size());
    std::string_view word = text.substr(i, end - i);
    i = end + 1;
    std::size_t w = code_points(word);
    if (!fresh && limit > 0 && used + 1 + w > limit) {
      if (word.empty()) continue;  // a space where the line breaks
      lines.emplace_back();
      used = 0, limit = width, fresh = true;
    }
    if (!fresh) lines.back() += ' ', ++used;
    lines.back() += word;
    used += w, fresh = false;
  }
  return lines;
}

std::string render_explain(const Plan& plan, const Style& st, std::size_t columns) {
  size_t name_w = 7, value_w = 5;
  for (const auto& s : plan.settings) name_w = std::max(name_w, s.name.size());
  std::size_t value_cap = value_column_cap(name_w, columns);
  for (const auto& s : plan.settings) value_w = std::max(value_w, std::min(code_points(printable(s.value)), value_cap));
  std::string out = paint(st, kBold, fmt::format("{:<{}}  {:<{}}  {}", "SETTING", name_w, "VALUE", value_w, "WHY")) + "\n";
  std::size_t indent = name_w + 2 + value_w + 2;
  bool shortened = false;
  for (const auto& s : plan.settings) {
    std::string why = printable(s.reason), value = printable(s.value);
    if (s.origin == Origin::kKept) why = "[kept] " + why;
    if (s.origin == Origin::kOverridden) why = "[override] " + why;
    if (columns > 0 && code_points(value) > value_w) value = shorten_middle(value, value_w), shortened = true;
    std::size_t start = name_w + 2 + std::max(value_w, code_points(value)) + 2;
    std::string pad(value_w > code_points(value) ? value_w - code_points(value) : 0, ' ');
    out += fmt::format("{:<{}}  {}{}  {}\n", s.name, name_w, value, pad, why_cell(why, start, indent, columns));
  }
  if (shortened) out += "(a value shortened in the middle with \u2026: --wide or --json shows it whole)\n";
  if (plan.settings.empty()) out += "(no settings: nothing on this machine calls for one)\n";
  if (!plan.launch.seen.empty()) out += "\nlauncher: " + printable(launch_summary(plan.launch)) + "\n";
  if (plan.binding)
    out += fmt::format("{}CPU affinity: {}  ({})\n", plan.launch.seen.empty() ? "\n" : "",
                       cpu_list(plan.binding->cpus), printable(plan.binding->reason));
  bool first = true;
  for (const auto& n : plan.notes) {
    if (first) out += "\n";
    first = false;
    const char* label = n.severity == Severity::kError ? "error" : n.severity == Severity::kWarning ? "warning" : "note";
    const char* colour = n.severity == Severity::kError ? kRed : kYellow;
    out += paint(st, n.severity == Severity::kInfo ? kBold : colour, label) + fmt::format(" [{}]: {}\n", n.rule, printable(n.message));
  }
  return out;
}

nlohmann::ordered_json plan_json(const Plan& plan) {
  using nlohmann::ordered_json;
  ordered_json settings = ordered_json::array();
  for (const auto& s : plan.settings) {
    const char* origin = s.origin == Origin::kKept ? "kept" : s.origin == Origin::kOverridden ? "overridden" : "decided";
    ordered_json j = {{"name", s.name}, {"value", s.value}, {"reason", s.reason}, {"rule", s.rule}, {"origin", origin}};
    if (s.user_value) j["user_value"] = *s.user_value;
    settings.push_back(j);
  }
  ordered_json notes = ordered_json::array();
  for (const auto& n : plan.notes) {
    const char* sev = n.severity == Severity::kError ? "error" : n.severity == Severity::kWarning ? "warning" : "info";
    notes.push_back({{"severity", sev}, {"rule", n.rule}, {"message", n.message}});
  }
  ordered_json binding = nullptr;
  if (plan.binding) binding = {{"cpus", plan.binding->cpus}, {"reason", plan.binding->reason}};
  ordered_json j = {{"settings", settings}, {"notes", notes}, {"cpu_binding", binding},
                    {"launcher", launcher_json(plan.launch)}};
  return j;
}

nlohmann::json report_json(const DetectReport& r) { return machine_json(r.machine); }
std::string report_text(const DetectReport& r, const Style& style) { return render_detect(r.machine, style); }

nlohmann::ordered_json report_json(const ExplainReport& r) {
  nlohmann::ordered_json j = plan_json(r.plan);
  if (r.feedback) j["feedback"] = nlohmann::ordered_json(report_json(*r.feedback));
  return j;
}
std::string report_text(const ExplainReport& r, const Style& style) {
  return render_explain(r.plan, style, r.columns) + (r.feedback ? report_text(*r.feedback, style) : "");
}

}  // namespace gpuenv
