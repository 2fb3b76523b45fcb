// Prometheus' text exposition format, version 0.0.4: families of samples
// with their # HELP and # TYPE lines. Pure; what the exporter serves at
// /metrics (act/render/gpu_metrics.h builds the families). The format:
// https://prometheus.io/docs/instrumenting/exposition_formats/
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuenv::prometheus {

/// The Content-Type of the format.
inline constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

enum class Type { kGauge, kCounter };

/// Label names and values, in the order they are written.
using Labels = std::vector<std::pair<std::string, std::string>>;

struct Sample {
  Labels labels;
  double value = 0;
};

struct MetricFamily {
  std::string name;  // [a-zA-Z_:][a-zA-Z0-9_:]*
  Type type = Type::kGauge;
  std::string help;
  std::vector<Sample> samples;
};

/// A label value as the format quotes it: backslash, double quote and
/// newline escaped (\\, \", \n). Bytes that are not UTF-8 are spelled as
/// printable() spells them, so one odd byte cannot spoil a scrape.
std::string escape_label_value(std::string_view value);

/// HELP text: backslash and newline escaped.
std::string escape_help(std::string_view help);

/// A sample value: whole numbers below 2^53 in full ("150754820096",
/// "1980000000"), others the shortest text that reads back as the same
/// double ("0.75", "1e+300"); NaN, +Inf, -Inf.
std::string format_value(double value);

/// Every family with samples: its # HELP and # TYPE lines, then its samples,
/// one a line. Families without samples are left out.
std::string render(const std::vector<MetricFamily>& families);

}  // namespace gpuenv::prometheus
