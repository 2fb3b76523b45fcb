#include "sense/prometheus/prometheus_api.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>

namespace gpuenv::prom {
namespace {

using nlohmann::json;

std::string_view without_trailing_slashes(std::string_view base) {
  while (!base.empty() && base.back() == '/') base.remove_suffix(1);
  return base;
}

std::string seconds_text(double t) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", t);
  return buf;
}

// ---- the answer

bool parse_number(const json& j, double* out) {
  if (j.is_number()) {
    *out = j.get<double>();
    return true;
  }
  if (!j.is_string()) return false;
  const std::string& s = j.get_ref<const std::string&>();
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size();
}

// [1435781430.781, "1"]
bool parse_sample(const json& j, Sample* out, std::string* err) {
  if (!j.is_array() || j.size() != 2 || !j[0].is_number() || !parse_number(j[1], &out->v)) {
    *err = "a sample is not [time, \"value\"]: " + j.dump(-1, ' ', false, json::error_handler_t::replace).substr(0, 80);
    return false;
  }
  out->t = j[0].get<double>();
  return true;
}

// The string at `key` of object `j`; "" when it is absent or not a string.
std::string string_at(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

bool parse_labels(const json& j, Series* out, std::string* err) {
  if (!j.is_object()) {
    *err = "a series' \"metric\" is not an object";
    return false;
  }
  for (const auto& [k, v] : j.items()) {
    if (!v.is_string()) {
      *err = "the label " + k + " is not a string";
      return false;
    }
    out->labels[k] = v.get<std::string>();
  }
  return true;
}

bool parse_samples(const json& values, Series* out, std::string* err) {
  if (!values.is_array()) {
    *err = "a series' \"values\" is not an array";
    return false;
  }
  out->samples.reserve(values.size());
  for (const json& e : values) {
    Sample s;
    if (!parse_sample(e, &s, err)) return false;
    out->samples.push_back(s);
  }
  return true;
}

// A matrix's or vector's element: {"metric": {...}, "values": [...]} or
// {"metric": {...}, "value": [...]}; one with only "histogram(s)" has no samples.
bool parse_series(const json& j, Series* out, std::string* err) {
  if (!j.is_object()) {
    *err = "a result is not an object";
    return false;
  }
  auto metric = j.find("metric");
  if (metric != j.end() && !parse_labels(*metric, out, err)) return false;
  if (auto v = j.find("value"); v != j.end()) {
    Sample s;
    if (!parse_sample(*v, &s, err)) return false;
    out->samples.push_back(s);
  }
  auto values = j.find("values");
  return values == j.end() || parse_samples(*values, out, err);
}

bool parse_result(const json& data, std::vector<Series>* out, std::string* err) {
  std::string type = string_at(data, "resultType");
  auto result = data.find("result");
  if (result == data.end()) {
    *err = "no data.result";
    return false;
  }
  if (type == "scalar") {
    Series s;
    s.samples.resize(1);
    if (!parse_sample(*result, &s.samples[0], err)) return false;
    out->push_back(std::move(s));
    return true;
  }
  if (type != "matrix" && type != "vector") {
    *err = type.empty() ? "no data.resultType" : "a result of type \"" + type + "\", not a matrix, vector or scalar";
    return false;
  }
  if (!result->is_array()) {
    *err = "data.result is not an array";
    return false;
  }
  for (const json& e : *result) {
    Series s;
    if (!parse_series(e, &s, err)) return false;
    out->push_back(std::move(s));
  }
  return true;
}

std::string error_of(const json& j) {
  std::string type = string_at(j, "errorType"), text = string_at(j, "error");
  if (text.empty()) text = "an error without its text";
  return type.empty() ? text : type + ": " + text;
}

// ---- durations and times

double unit_seconds(std::string_view unit) {
  static const std::pair<std::string_view, double> units[] = {
      {"y", 365 * 86400.0}, {"w", 7 * 86400.0}, {"d", 86400}, {"h", 3600}, {"m", 60}, {"s", 1}, {"ms", 0.001}};
  for (const auto& [name, s] : units)
    if (unit == name) return s;
  return 0;
}

// Digits at `s`; false when there are none.
bool digits(std::string_view* s, double* value) {
  std::size_t n = 0;
  *value = 0;
  while (n < s->size() && (*s)[n] >= '0' && (*s)[n] <= '9') *value = *value * 10 + ((*s)[n++] - '0');
  s->remove_prefix(n);
  return n > 0;
}

// A fixed-width field of digits of an RFC 3339 time.
bool field(std::string_view s, std::size_t at, std::size_t width, int* out) {
  if (at + width > s.size()) return false;
  *out = 0;
  for (std::size_t i = at; i < at + width; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    *out = *out * 10 + (s[i] - '0');
  }
  return true;
}

bool parse_date(std::string_view s, std::tm* tm) {
  int y, mo, d;
  if (s.size() < 10 || s[4] != '-' || s[7] != '-' || !field(s, 0, 4, &y) || !field(s, 5, 2, &mo) ||
      !field(s, 8, 2, &d) || mo < 1 || mo > 12 || d < 1 || d > 31)
    return false;
  *tm = std::tm{};
  tm->tm_year = y - 1900;
  tm->tm_mon = mo - 1;
  tm->tm_mday = d;
  return true;
}

// "03:04:05", then an optional fraction; what follows in *rest.
bool parse_clock(std::string_view s, std::tm* tm, double* fraction, std::string_view* rest) {
  if (s.size() < 8 || s[2] != ':' || s[5] != ':' || !field(s, 0, 2, &tm->tm_hour) ||
      !field(s, 3, 2, &tm->tm_min) || !field(s, 6, 2, &tm->tm_sec) || tm->tm_hour > 23 || tm->tm_min > 59 ||
      tm->tm_sec > 60)
    return false;
  s.remove_prefix(8);
  *fraction = 0;
  if (!s.empty() && s[0] == '.') {
    std::size_t n = 1;
    for (double scale = 0.1; n < s.size() && s[n] >= '0' && s[n] <= '9'; ++n, scale /= 10) *fraction += (s[n] - '0') * scale;
    if (n == 1) return false;
    s.remove_prefix(n);
  }
  *rest = s;
  return true;
}

// "Z", "+01:00", "-05:30" -> seconds east of UTC.
bool parse_offset(std::string_view s, int* east) {
  if (s == "Z" || s == "z") {
    *east = 0;
    return true;
  }
  int h, m;
  if (s.size() != 6 || (s[0] != '+' && s[0] != '-') || s[3] != ':' || !field(s, 1, 2, &h) || !field(s, 4, 2, &m) ||
      h > 23 || m > 59)
    return false;
  *east = (s[0] == '-' ? -1 : 1) * (h * 3600 + m * 60);
  return true;
}

bool parse_rfc3339(std::string_view s, double* out) {
  std::tm tm;
  double fraction = 0;
  std::string_view rest;
  int east = 0;
  if (!parse_date(s, &tm)) return false;
  if (s.size() == 10) {
    *out = static_cast<double>(timegm(&tm));
    return true;
  }
  if (s[10] != 'T' && s[10] != 't' && s[10] != ' ') return false;
  if (!parse_clock(s.substr(11), &tm, &fraction, &rest) || !parse_offset(rest, &east)) return false;
  *out = static_cast<double>(timegm(&tm)) + fraction - east;
  return true;
}

bool parse_unix(std::string_view s, double* out) {
  if (s.empty() || s.find_first_not_of("0123456789.") != std::string_view::npos) return false;
  std::string text(s);
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(*out);
}

}  // namespace

bool valid_base_url(std::string_view base, std::string* err) {
  std::string_view rest;
  if (base.rfind("http://", 0) == 0) rest = base.substr(7);
  else if (base.rfind("https://", 0) == 0) rest = base.substr(8);
  else {
    *err = "\"" + std::string(base) + "\" is not an http:// or https:// URL (e.g. http://prometheus:9090)";
    return false;
  }
  if (rest.empty() || rest[0] == '/' || rest.find_first_of("?# \t\r\n") != std::string_view::npos) {
    *err = "\"" + std::string(base) + "\" has no host, or a query or fragment (give the server, e.g. "
           "http://prometheus:9090)";
    return false;
  }
  return true;
}

std::string url_escape(std::string_view s) {
  static const char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size() * 3);
  for (unsigned char c : s) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
        c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string range_query_url(std::string_view base, const RangeQuery& q) {
  return std::string(without_trailing_slashes(base)) + "/api/v1/query_range?query=" + url_escape(q.expr) +
         "&start=" + seconds_text(q.start) + "&end=" + seconds_text(q.end) + "&step=" + seconds_text(q.step);
}

std::string instant_query_url(std::string_view base, std::string_view expr, double time) {
  return std::string(without_trailing_slashes(base)) + "/api/v1/query?query=" + url_escape(expr) +
         "&time=" + seconds_text(time);
}

std::string promql_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string either_job(std::string_view pattern, std::string_view job) {
  auto fill = [&](const std::string& matchers) {
    std::string out;
    for (std::size_t at = 0;;) {
      std::size_t hole = pattern.find("{}", at);
      out += pattern.substr(at, hole == std::string_view::npos ? std::string_view::npos : hole - at);
      if (hole == std::string_view::npos) return out;
      out += "{" + matchers + "}";
      at = hole + 2;
    }
  };
  std::string id = promql_string(job);
  return fill("job=" + id + ",exported_job=\"\"") + " or " + fill("exported_job=" + id);
}

void restore_job_label(std::vector<Series>* series) {
  for (Series& s : *series) {
    auto it = s.labels.find("exported_job");
    if (it == s.labels.end()) continue;
    s.labels["job"] = it->second;
    s.labels.erase("exported_job");
  }
}

bool parse_answer(std::string_view body, std::vector<Series>* out, std::string* err) {
  out->clear();
  json j = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    *err = j.is_discarded() ? "not JSON" : "not a JSON object";
    return false;
  }
  std::string status = string_at(j, "status");
  if (status == "error") {
    *err = error_of(j);
    return false;
  }
  auto data = j.find("data");
  if (status != "success" || data == j.end() || !data->is_object()) {
    *err = status != "success" ? "no \"status\": \"success\"" : "no \"data\" object";
    return false;
  }
  if (parse_result(*data, out, err)) return true;
  out->clear();
  return false;
}

bool parse_duration(std::string_view s, double* seconds) {
  *seconds = 0;
  double last_unit = INFINITY;
  if (s.empty()) return false;
  while (!s.empty()) {
    double n;
    if (!digits(&s, &n)) return false;
    std::size_t len = s.rfind("ms", 0) == 0 ? 2 : 1;
    double unit = s.empty() ? 0 : unit_seconds(s.substr(0, len));
    if (unit == 0 || unit >= last_unit) return false;  // no unit, an unknown one, or out of order
    *seconds += n * unit;
    last_unit = unit;
    s.remove_prefix(len);
  }
  return *seconds > 0 && std::isfinite(*seconds);
}

bool parse_time(std::string_view s, double* unix_seconds) {
  return parse_unix(s, unix_seconds) || parse_rfc3339(s, unix_seconds);
}

namespace {

// What an HTTP status that is not 2xx means here.
std::string status_text(long status, const std::string& why) {
  std::string out = "HTTP " + std::to_string(status) + ": " + why;
  if (status / 100 == 3) out += " (a redirect, and gpuenv follows none: give the URL it points to)";
  if (status == 404) out += " (is that Prometheus's address, with its path prefix if it has one?)";
  return out;
}

}  // namespace

bool Client::ask(const std::string& url, std::string_view endpoint, std::vector<Series>* out,
                 std::string* err) const {
  std::string where = "Prometheus at " + base_ + " (" + std::string(endpoint) + ")";
  sys::HttpResponse r;
  std::string why;
  if (!get_(url, &r, &why)) {
    std::string prefix = "GET " + url + ": ";
    if (why.rfind(prefix, 0) == 0) why.erase(0, prefix.size());
    *err = where + ": " + why;
    return false;
  }
  bool parsed = parse_answer(r.body, out, &why);
  if (parsed && r.status / 100 == 2) return true;
  out->clear();
  if (r.status / 100 != 2) *err = where + ": " + status_text(r.status, parsed ? "an answer of success" : why);
  else *err = where + ": the answer is not the query API's JSON: " + why;
  return false;
}

bool Client::query_range(const RangeQuery& q, std::vector<Series>* out, std::string* err) const {
  return ask(range_query_url(base_, q), "/api/v1/query_range", out, err);
}

bool Client::query(std::string_view expr, double time, std::vector<Series>* out, std::string* err) const {
  return ask(instant_query_url(base_, expr, time), "/api/v1/query", out, err);
}

}  // namespace gpuenv::prom
