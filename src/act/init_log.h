// What `gpuenv init` reports at start: a short banner for people, or JSON
// lines for log collectors (--log-format json). Both go to stderr: stdout
// belongs to the command.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "act/supervise.h"
#include "model/machine.h"
#include "model/plan.h"

namespace gpuenv {

enum class LogFormat { kText, kJson };

/// Parses "text" or "json".
bool parse_log_format(const std::string& name, LogFormat* out);

/// One thing init reports. Text mode prints `text` (prefixed by its level
/// when it is a warning or an error); JSON mode prints `fields` with "time",
/// "level" and "msg" in front.
struct LogEvent {
  Severity level = Severity::kInfo;
  std::string msg;   // short and stable: "gpu", "setting", "starting", ...
  std::string text;  // the human line; empty: nothing in text mode
  nlohmann::ordered_json fields = nlohmann::ordered_json::object();
};

/// The banner: the driver and GPUs (or the CPU-mode warning), each setting,
/// and the plan's warnings and errors.
std::vector<LogEvent> banner_events(const Machine& m, const Plan& plan);

LogEvent wrote_event(const std::string& path);
LogEvent write_failed_event(const std::string& path, const std::string& error);
LogEvent skipped_event(const std::string& path, const std::string& name);
LogEvent starting_event(const std::vector<std::string>& argv);
LogEvent exited_event(const ChildExit& e);
LogEvent error_event(const std::string& message);

/// One event as its line (with the newline). `time` is RFC 3339 UTC.
std::string render_event(const LogEvent& e, LogFormat format, const std::string& time);

/// The current time, RFC 3339 UTC with milliseconds.
std::string rfc3339_now();

}  // namespace gpuenv
