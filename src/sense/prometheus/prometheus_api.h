// Prometheus's HTTP API, read (prometheus.io/docs/prometheus/latest/querying/api/):
// GET /api/v1/query and /api/v1/query_range, the answers parsed into series,
// and the PromQL text gpuenv builds for a job: a label value quoted, and the
// job's selector in both forms Prometheus may keep the exporter's own `job`
// label in (honor_labels: true keeps it as `job`; otherwise it becomes
// `exported_job`, the scrape's job taking `job`).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sys/http_get.h"

namespace gpuenv::prom {

/// One sample: unix seconds and the value (NaN and ±Inf as Prometheus sends them).
struct Sample {
  double t = 0;
  double v = 0;
  friend bool operator==(const Sample&, const Sample&) = default;
};

/// One series of an answer: its labels (with __name__ where Prometheus kept
/// it) and its samples in time order; an instant query's have one each.
struct Series {
  std::map<std::string, std::string> labels;
  std::vector<Sample> samples;
  friend bool operator==(const Series&, const Series&) = default;
};

/// `expr` evaluated at start, start + step, ... up to end (unix seconds).
struct RangeQuery {
  std::string expr;
  double start = 0, end = 0, step = 15;
};

/// True when `base` is an http:// or https:// URL with a host (a path
/// prefix is kept: http://host/prometheus); else false with *err saying why.
bool valid_base_url(std::string_view base, std::string* err);

/// BASE/api/v1/query_range?query=...&start=...&end=...&step=... (BASE
/// without its trailing slashes; times to the millisecond).
std::string range_query_url(std::string_view base, const RangeQuery& q);
/// BASE/api/v1/query?query=...&time=...
std::string instant_query_url(std::string_view base, std::string_view expr, double time);

/// RFC 3986 percent-encoding: every byte but A-Z a-z 0-9 - . _ ~ as %XX.
std::string url_escape(std::string_view s);

/// `s` as a PromQL string literal: in double quotes, with \ " and the
/// newline escaped (a job id comes from the command line).
std::string promql_string(std::string_view s);

/// `pattern` once for each form of the job's label, joined by " or ": each
/// "{}" in it becomes {job="ID",exported_job=""}, then {exported_job="ID"}.
///   either_job("m{}", "42") ->
///   m{job="42",exported_job=""} or m{exported_job="42"}
std::string either_job(std::string_view pattern, std::string_view job);

/// The job's label back where the exporter put it: a series with
/// exported_job gets it as `job` (the scrape's job is dropped).
void restore_job_label(std::vector<Series>* series);

/// An answer of /api/v1/query or /api/v1/query_range, parsed: a matrix,
/// vector or scalar into series (native-histogram samples are left out). An
/// error answer ("status": "error") is false with Prometheus's errorType and
/// error in *err; so is anything that is not that API's JSON, saying what.
bool parse_answer(std::string_view body, std::vector<Series>* out, std::string* err);

/// A Prometheus duration ("14d", "1h30m", "90s", "500ms", "2w", "1y":
/// units largest first, each once) in seconds; false when not one, or 0.
bool parse_duration(std::string_view s, double* seconds);

/// A time as unix seconds: digits with an optional fraction
/// ("1767225600.5"), RFC 3339 ("2026-01-02T03:04:05Z", with a fraction or
/// an offset "+01:00"), or a date ("2026-01-02", midnight UTC); false else.
bool parse_time(std::string_view s, double* unix_seconds);

/// GETs a URL: sys::http_get in a command, a canned answer in a test.
using HttpGetFn = std::function<bool(const std::string& url, sys::HttpResponse* out, std::string* err)>;

/// Prometheus at `base`, asked through `get`.
class Client {
 public:
  Client(std::string base, HttpGetFn get) : base_(std::move(base)), get_(std::move(get)) {}

  /// The series of a range query; false with *err naming Prometheus's URL
  /// and what failed: no answer, an HTTP status (with Prometheus's error),
  /// an answer that does not parse.
  bool query_range(const RangeQuery& q, std::vector<Series>* out, std::string* err) const;
  /// The same for an instant query at `time`.
  bool query(std::string_view expr, double time, std::vector<Series>* out, std::string* err) const;

  const std::string& base() const { return base_; }

 private:
  bool ask(const std::string& url, std::string_view endpoint, std::vector<Series>* out, std::string* err) const;

  std::string base_;
  HttpGetFn get_;
};

}  // namespace gpuenv::prom
