#include "act/init_log.h"

#include <fmt/format.h>

#include "act/render/machine_report.h"
#include "decide/arch.h"
#include "sys/signals.h"

namespace gpuenv {
namespace {

using nlohmann::ordered_json;

const char* origin_name(Origin o) {
  return o == Origin::kKept ? "kept" : o == Origin::kOverridden ? "overridden" : "decided";
}

std::string cc_text(const std::optional<ComputeCapability>& cc) {
  return cc ? cc_string(*cc) : "?";
}

LogEvent event(Severity level, std::string msg, std::string text, ordered_json fields) {
  return {level, std::move(msg), std::move(text), std::move(fields)};
}

LogEvent driver_event(const Machine& m) {
  std::string text = fmt::format("gpuenv {}: {} GPU{}", GPUENV_VERSION, m.gpus.size(),
                                 m.gpus.size() == 1 ? "" : "s");
  ordered_json f = {{"gpus", m.gpus.size()}};
  if (m.nvidia.driver_version) {
    text += ", driver " + printable(*m.nvidia.driver_version);
    f["driver_version"] = *m.nvidia.driver_version;
  }
  if (int v = m.nvidia.cuda_driver_version.value_or(0)) {
    text += fmt::format(" (CUDA {}.{})", v / 1000, (v % 1000) / 10);
    f["cuda_driver_version"] = fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
  }
  return event(Severity::kInfo, "machine", text, f);
}

LogEvent gpu_event(const Gpu& g) {
  std::string name = g.name ? printable(*g.name) : "?";
  std::string text = fmt::format("  GPU {}  {}  cc {}", g.index, name, cc_text(g.compute_capability));
  if (g.compute_capability) text += " (" + family_name(*g.compute_capability) + ")";
  ordered_json f = {{"index", g.index}, {"name", g.name.value_or("")},
                    {"compute_capability", cc_text(g.compute_capability)}};
  if (g.memory_total_bytes) {
    text += "  " + human_bytes(*g.memory_total_bytes);
    f["memory_total_bytes"] = *g.memory_total_bytes;
  }
  return event(Severity::kInfo, "gpu", text, f);
}

LogEvent cpu_mode_event(const Machine& m) {
  std::string why = "NVML reported no GPU";
  std::string fix;
  if (!m.nvidia.problems.empty()) {
    why = m.nvidia.problems.front().message;
    fix = m.nvidia.problems.front().fix;
  }
  if (m.host.container && m.host.nvidia_device_nodes.empty())
    fix = "start the container with GPUs: docker run --gpus all (NVIDIA Container Toolkit)";
  std::string text = "no NVIDIA GPU: running in CPU mode (" + printable(why) + ")";
  if (!fix.empty()) text += "; " + printable(fix);
  return event(Severity::kWarning, "cpu mode", text, {{"reason", why}, {"fix", fix}});
}

LogEvent setting_event(const Setting& s) {
  std::string text = "  " + s.name + "=" + printable(s.value);
  if (s.origin == Origin::kKept) text += "  (yours, kept)";
  ordered_json f = {{"name", s.name},     {"value", s.value}, {"origin", origin_name(s.origin)},
                    {"rule", s.rule},     {"reason", s.reason}};
  return event(Severity::kInfo, "setting", text, f);
}

LogEvent note_event(const Note& n) {
  return event(n.severity, "note", "[" + n.rule + "] " + printable(n.message),
               {{"rule", n.rule}, {"message", n.message}});
}

}  // namespace

std::vector<LogEvent> banner_events(const Machine& m, const Plan& plan) {
  std::vector<LogEvent> out = {driver_event(m)};
  for (const auto& g : m.gpus) out.push_back(gpu_event(g));
  if (m.gpus.empty()) out.push_back(cpu_mode_event(m));
  for (const auto& s : plan.settings) out.push_back(setting_event(s));
  for (const auto& n : plan.notes)
    if (n.severity != Severity::kInfo) out.push_back(note_event(n));
  return out;
}

LogEvent wrote_event(const std::string& path) {
  return event(Severity::kInfo, "wrote", "", {{"path", path}});
}

LogEvent write_failed_event(const std::string& path, const std::string& error) {
  std::string text = "cannot write " + path + ": " + error +
                     "; later shells and SSH sessions will not read the plan from it (run init as "
                     "root, or set GPUENV_ETC_DIR / GPUENV_PROFILE_D to writable directories)";
  return event(Severity::kWarning, "write failed", text, {{"path", path}, {"error", error}});
}

LogEvent skipped_event(const std::string& path, const std::string& name) {
  std::string text = name + " left out of " + path + ": its value holds a newline, CR or NUL, " +
                     "or bytes that are not UTF-8, which a dotenv file cannot carry (the profile " +
                     "script and the command have it)";
  return event(Severity::kWarning, "skipped", text, {{"path", path}, {"name", name}});
}

LogEvent starting_event(const std::vector<std::string>& argv) {
  return event(Severity::kInfo, "starting", "", {{"argv", argv}});
}

LogEvent exited_event(const ChildExit& e) {
  if (!e.signal) return event(Severity::kInfo, "exited", "", {{"code", e.code}});
  std::string text = "the command was ended by " + sys::signal_name(e.signal);
  return event(Severity::kWarning, "exited", text, {{"code", e.code}, {"signal", sys::signal_name(e.signal)}});
}

LogEvent error_event(const std::string& message) {
  return event(Severity::kError, "error", message, {{"message", message}});
}

}  // namespace gpuenv
