// How gpuenv reports on stderr. Every message and problem a command shows
// there goes through log_event() or log_message(): as text lines for people
// (the default), or as one JSON object per line for log collectors
// (--log-format json, GPUENV_LOG_FORMAT=json). stdout is data and never
// comes here.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "model/plan.h"
#include "sys/text.h"  // utc_now_ms, the events' time

namespace gpuenv {

enum class LogFormat { kText, kJson };

/// Parses "text" or "json".
bool parse_log_format(const std::string& name, LogFormat* out);

/// One thing to report. JSON mode prints {"time", "level", "msg",
/// "command"} and then `fields`; text mode prints `text` as `form` says.
struct LogEvent {
  enum class Form {
    kBanner,    // init's: info bare, others "gpuenv: LEVEL: text"
    kLine,      // "gpuenv: text", whatever the level
    kVerbatim,  // text as it is (already laid out in lines)
  };
  Severity level = Severity::kInfo;
  std::string msg;   // short and stable: "gpu", "setting", "note", "error", ...
  std::string text;  // the human line; empty: nothing in text mode
  nlohmann::ordered_json fields = nlohmann::ordered_json::object();
  Form form = Form::kBanner;
};

/// One event as its line(s), with the newline. `time` is RFC 3339 UTC;
/// `command` (when not empty) follows "msg" in JSON. Text mode prints the
/// text through the terminal sanitiser (act/render/printable.h: printable(),
/// printable_lines() for kVerbatim); JSON is model/json_text.h's json_line
/// (bytes that are not UTF-8 replaced, DEL and C1 controls escaped).
std::string render_event(const LogEvent& e, LogFormat format, const std::string& time,
                         const std::string& command = "");

/// Where this process's events go: the format, and the command that runs
/// (the "command" field). Set by the CLI once it knows them.
void configure_log(LogFormat format, const std::string& command);
LogFormat log_format();

/// Writes `e` on stderr, now, in the configured format.
void log_event(const LogEvent& e);

/// The one call for a command's message or problem. Text mode: "gpuenv:
/// TEXT", "gpuenv: warning: TEXT" for a warning, sanitised for the terminal
/// (act/render/printable.h). JSON: `event` as "msg", then `fields`, then
/// "message": TEXT.
void log_message(Severity level, const std::string& event, const std::string& text,
                 nlohmann::ordered_json fields = nlohmann::ordered_json::object());

/// Where a sequence says what it has to say, in log_message's shape:
/// log_message itself in a command, a list in a test (flow/export.h).
using MessageSink = std::function<void(Severity level, const std::string& event, const std::string& text,
                                       nlohmann::ordered_json fields)>;

/// "gpuenv: TEXT" as an error event "error" (log_message).
void print_error(const std::string& text);

/// Writes an error without allocating, for when memory has run out: `event`
/// and `text` must be plain ASCII without quotes or backslashes.
void log_without_allocating(const char* event, const char* text);

}  // namespace gpuenv
