#include "act/rate_limited_log.h"

namespace gpuenv {

void RateLimitedLog::log(const std::string& text, Severity level, nlohmann::ordered_json fields) {
  log_at(std::chrono::steady_clock::now(), text, level, std::move(fields));
}

void RateLimitedLog::log_at(std::chrono::steady_clock::time_point now, const std::string& text, Severity level,
                            nlohmann::ordered_json fields) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (logged_ && now - last_ < every_) {
    ++left_out_;
    return;
  }
  std::string line = text;
  if (left_out_ > 0) {
    line += " (and " + std::to_string(left_out_) + " more like it in the last " +
            std::to_string((now - last_) / std::chrono::seconds(1)) + " s)";
    fields["left_out"] = left_out_;
  }
  sink_(level, event_, line, std::move(fields));
  logged_ = true;
  last_ = now;
  left_out_ = 0;
}

}  // namespace gpuenv
