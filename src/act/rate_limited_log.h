// A message that repeats, said at most once per period: the exporter's
// HTTP limits and its pod watcher each hold one per kind of problem.
#pragma once

#include <chrono>
#include <mutex>
#include <string>

#include "act/log.h"

namespace gpuenv {

/// Through log_message at most once per `every`: the first line at once,
/// a later one only once `every` has passed since the last line, with how
/// many were left out in between (" (and 12 more like it in the last
/// 60 s)"; JSON also "left_out": 12), or through `sink` when given. Safe to
/// call from any thread.
class RateLimitedLog {
 public:
  RateLimitedLog(std::chrono::seconds every, std::string event, MessageSink sink = log_message)
      : every_(every), event_(std::move(event)), sink_(std::move(sink)) {}
  void log(const std::string& text, Severity level = Severity::kWarning,
           nlohmann::ordered_json fields = nlohmann::ordered_json::object());
  /// The same at a given time (for tests).
  void log_at(std::chrono::steady_clock::time_point now, const std::string& text, Severity level,
              nlohmann::ordered_json fields);

 private:
  std::chrono::seconds every_;
  std::string event_;
  MessageSink sink_;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point last_{};
  bool logged_ = false;
  long left_out_ = 0;
};

}  // namespace gpuenv
