// Measurement: one figure that `gpuenv bench` or `gpuenv check` measured on
// this machine, as kept in the store and carried in Machine::measurements.
// Rules read measurements only through the Machine (decide/rules/rule_measured.cc).
#pragma once

#include <cmath>
#include <optional>
#include <string>

namespace gpuenv {

struct Measurement {
  std::string key;                       // case key: "gemm_bf16_8192", "memcpy_d2d", "p2p", ...
  std::string gpu_uuid;                  // the GPU measured; "" for a figure over all GPUs
  std::optional<std::string> peer_uuid;  // the other GPU of a pair (p2p)
  std::optional<double> value;           // in `unit`; nullopt when the case failed
  std::string unit;                      // "TFLOP/s", "GB/s", "us"
  std::optional<double> peak;            // the GPU's spec peak in `unit`, when known
  std::string status = "ok";             // ok|failed
  std::string detail;                    // method or failure, one line
  std::string measured_at;               // RFC 3339 UTC
  std::optional<std::string> gpuenv_version;

  bool ok() const { return status == "ok"; }
  /// value as a percentage of peak, when both are known and peak > 0.
  std::optional<double> percent_of_peak() const {
    if (!value || !peak || *peak <= 0) return std::nullopt;
    return 100.0 * *value / *peak;
  }
  friend bool operator==(const Measurement&, const Measurement&) = default;
};

/// "" when `m` is what gpuenv writes (bench::to_measurement): status ok or
/// failed, a value (when known) finite and not negative, a peak (when known)
/// finite and positive; else what is wrong. A stored figure is input: the
/// measured rule compares it with the peak.
inline std::string measurement_problem(const Measurement& m) {
  if (m.status != "ok" && m.status != "failed") return "status is neither ok nor failed";
  if (m.value && !(std::isfinite(*m.value) && *m.value >= 0)) return "value is negative or not finite";
  if (m.peak && !(std::isfinite(*m.peak) && *m.peak > 0)) return "peak is not a positive finite number";
  return "";
}

}  // namespace gpuenv
