#include "act/log.h"

#include <fmt/format.h>

#include <cstdio>

#include "act/render/printable.h"
#include "model/json_text.h"

namespace gpuenv {
namespace {

using nlohmann::ordered_json;

const char* level_name(Severity s) {
  return s == Severity::kError ? "error" : s == Severity::kWarning ? "warning" : "info";
}

// The process's log: one per process, set by the CLI before a command runs.
struct Sink {
  LogFormat format = LogFormat::kText;
  std::string command;
};

Sink& sink() {
  static Sink s;
  return s;
}

// Every event's text passes the terminal sanitiser here, whoever built it (an
// error of init's naming GPUENV_USER, a path): printable() is idempotent, so
// text already made printable comes out the same.
std::string render_text(const LogEvent& e) {
  if (e.text.empty()) return "";
  switch (e.form) {
    case LogEvent::Form::kVerbatim: return printable_lines(e.text);
    case LogEvent::Form::kLine: return "gpuenv: " + printable(e.text) + "\n";
    case LogEvent::Form::kBanner: break;
  }
  if (e.level == Severity::kInfo) return printable(e.text) + "\n";
  return std::string("gpuenv: ") + level_name(e.level) + ": " + printable(e.text) + "\n";
}

}  // namespace

bool parse_log_format(const std::string& name, LogFormat* out) {
  if (name == "text") *out = LogFormat::kText;
  else if (name == "json") *out = LogFormat::kJson;
  else return false;
  return true;
}

std::string render_event(const LogEvent& e, LogFormat format, const std::string& time,
                         const std::string& command) {
  if (format == LogFormat::kText) return render_text(e);
  ordered_json j = {{"time", time}, {"level", level_name(e.level)}, {"msg", e.msg}};
  if (!command.empty()) j["command"] = command;
  for (const auto& [k, v] : e.fields.items()) j[k] = v;
  return json_line(j) + "\n";
}

void configure_log(LogFormat format, const std::string& command) {
  sink().format = format;
  sink().command = command;
}

LogFormat log_format() { return sink().format; }

void log_event(const LogEvent& e) {
  std::string line = render_event(e, sink().format, utc_now_ms(), sink().command);
  std::fputs(line.c_str(), stderr);
}

void log_message(Severity level, const std::string& event, const std::string& text,
                 ordered_json fields) {
  std::string line = level == Severity::kWarning ? "warning: " + printable(text) : printable(text);
  fields["message"] = text;
  log_event({level, event, std::move(line), std::move(fields), LogEvent::Form::kLine});
}

void print_error(const std::string& text) { log_message(Severity::kError, "error", text); }

void log_without_allocating(const char* event, const char* text) {
  if (sink().format == LogFormat::kText) {
    std::fprintf(stderr, "gpuenv: %s\n", text);
    return;
  }
  char time[32];
  utc_now_ms(time);
  const char* command = sink().command.c_str();
  std::fprintf(stderr, "{\"time\":\"%s\",\"level\":\"error\",\"msg\":\"%s\",%s%s%s\"message\":\"%s\"}\n",
               time, event, *command ? "\"command\":\"" : "", command, *command ? "\"," : "", text);
}

}  // namespace gpuenv
