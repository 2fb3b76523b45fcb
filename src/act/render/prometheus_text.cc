#include "act/render/prometheus_text.h"

#include <charconv>
#include <cmath>

#include "act/render/printable.h"

namespace gpuenv::prometheus {
namespace {

const char* type_name(Type t) { return t == Type::kCounter ? "counter" : "gauge"; }

void append_sample(std::string* out, const std::string& name, const Sample& s) {
  *out += name;
  if (!s.labels.empty()) {
    *out += '{';
    for (std::size_t i = 0; i < s.labels.size(); ++i) {
      if (i > 0) *out += ',';
      *out += s.labels[i].first;
      *out += "=\"";
      *out += escape_label_value(s.labels[i].second);
      *out += '"';
    }
    *out += '}';
  }
  *out += ' ';
  *out += format_value(s.value);
  *out += '\n';
}

}  // namespace

std::string escape_label_value(std::string_view value) {
  std::string utf8 = valid_utf8(value) ? std::string(value) : printable(value);
  std::string out;
  out.reserve(utf8.size());
  for (char c : utf8) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string escape_help(std::string_view help) {
  std::string out;
  for (char c : help) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[32];
  constexpr double kExactIntegers = 9007199254740992.0;  // 2^53: whole numbers print whole
  auto [end, ec] = std::trunc(value) == value && std::fabs(value) < kExactIntegers
                       ? std::to_chars(buf, buf + sizeof buf, static_cast<long long>(value))
                       : std::to_chars(buf, buf + sizeof buf, value);
  return ec == std::errc() ? std::string(buf, end) : "NaN";
}

std::string render(const std::vector<MetricFamily>& families) {
  std::string out;
  for (const MetricFamily& f : families) {
    if (f.samples.empty()) continue;
    out += "# HELP " + f.name + " " + escape_help(f.help) + "\n";
    out += "# TYPE " + f.name + " " + type_name(f.type) + "\n";
    for (const Sample& s : f.samples) append_sample(&out, f.name, s);
  }
  return out;
}

}  // namespace gpuenv::prometheus
