// What a sequence said through its MessageSink (act/log.h), from any of its
// threads: a test hands sink() where log_message would go, then looks the
// lines up by event.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "act/log.h"

namespace gpuenv::testing {

class Said {
 public:
  struct Line {
    Severity level;
    std::string event, text;
    nlohmann::ordered_json fields;
  };
  MessageSink sink() {
    return [this](Severity level, const std::string& event, const std::string& text, nlohmann::ordered_json f) {
      std::lock_guard<std::mutex> lock(mutex_);
      lines_.push_back({level, event, text, std::move(f)});
    };
  }
  /// The first line with this event.
  std::optional<Line> find(const std::string& event) const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const Line& l : lines_)
      if (l.event == event) return l;
    return std::nullopt;
  }
  /// Every line, in the order said.
  std::vector<Line> lines() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return lines_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<Line> lines_;
};

}  // namespace gpuenv::testing
