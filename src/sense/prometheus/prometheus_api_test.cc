// The Prometheus API client on canned answers: the URLs and PromQL it
// builds, the answers it parses (and the malformed ones it refuses, saying
// what), the durations and times of report's flags, and each way a query
// fails, named with Prometheus's URL.
#include "sense/prometheus/prometheus_api.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_paths.h"

namespace gpuenv::prom {
namespace {

TEST(PrometheusApi, EscapesEverythingButUnreservedCharacters) {
  EXPECT_EQ(url_escape("abc-XYZ_0.9~"), "abc-XYZ_0.9~");
  EXPECT_EQ(url_escape(R"(m{job="a b"}[5m] or x/y&z=1+2%)"),
            "m%7Bjob%3D%22a%20b%22%7D%5B5m%5D%20or%20x%2Fy%26z%3D1%2B2%25");
  EXPECT_EQ(url_escape("\xc3\xa9\n"), "%C3%A9%0A");
}

TEST(PrometheusApi, BuildsQueryUrls) {
  RangeQuery q{"up", 1767225600, 1767229200.5, 15};
  EXPECT_EQ(range_query_url("http://prom:9090/", q),
            "http://prom:9090/api/v1/query_range?query=up&start=1767225600.000&end=1767229200.500&step=15.000");
  EXPECT_EQ(range_query_url("https://host/prometheus", q).rfind("https://host/prometheus/api/v1/query_range?", 0), 0u);
  EXPECT_EQ(instant_query_url("http://prom:9090", "sum(up)", 1.25),
            "http://prom:9090/api/v1/query?query=sum%28up%29&time=1.250");
}

TEST(PrometheusApi, QuotesLabelValues) {
  EXPECT_EQ(promql_string("1234"), R"("1234")");
  EXPECT_EQ(promql_string("ml/train-0"), R"("ml/train-0")");
  EXPECT_EQ(promql_string("a\"b\\c\nd"), R"("a\"b\\c\nd")");
}

TEST(PrometheusApi, SelectsTheJobUnderEitherLabel) {
  EXPECT_EQ(either_job("m{}", "42"), R"(m{job="42",exported_job=""} or m{exported_job="42"})");
  EXPECT_EQ(either_job("timestamp(m{}) + n{}", "a\"b"),
            R"(timestamp(m{job="a\"b",exported_job=""}) + n{job="a\"b",exported_job=""} or )"
            R"(timestamp(m{exported_job="a\"b"}) + n{exported_job="a\"b"})");
}

TEST(PrometheusApi, RestoresTheExportersJobLabel) {
  std::vector<Series> s = {{{{"job", "gpuenv"}, {"exported_job", "42"}, {"gpu", "0"}}, {}},
                           {{{"job", "43"}, {"gpu", "1"}}, {}}};
  restore_job_label(&s);
  EXPECT_EQ(s[0].labels, (std::map<std::string, std::string>{{"job", "42"}, {"gpu", "0"}}));
  EXPECT_EQ(s[1].labels, (std::map<std::string, std::string>{{"job", "43"}, {"gpu", "1"}}));
}

TEST(PrometheusApi, ParsesAMatrix) {
  std::vector<Series> out;
  std::string err;
  ASSERT_TRUE(parse_answer(R"({"status":"success","data":{"resultType":"matrix","result":[
      {"metric":{"__name__":"gpuenv_job_gpu_seconds_total","job":"42","gpu":"0"},
       "values":[[1767225600,"0"],[1767225615.5,"15"],[1767225630,"NaN"],[1767225645,"+Inf"]]},
      {"metric":{},"values":[]}]},"warnings":["x"]})",
                           &out, &err))
      << err;
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].labels.at("job"), "42");
  EXPECT_EQ(out[0].labels.at("__name__"), "gpuenv_job_gpu_seconds_total");
  ASSERT_EQ(out[0].samples.size(), 4u);
  EXPECT_EQ(out[0].samples[1], (Sample{1767225615.5, 15}));
  EXPECT_TRUE(std::isnan(out[0].samples[2].v));
  EXPECT_TRUE(std::isinf(out[0].samples[3].v));
  EXPECT_TRUE(out[1].labels.empty());
}

TEST(PrometheusApi, ParsesAVectorAndAScalar) {
  std::vector<Series> out;
  std::string err;
  ASSERT_TRUE(parse_answer(R"({"status":"success","data":{"resultType":"vector","result":[
      {"metric":{"verdict":"busy"},"value":[1767225600.25,"1"]}]}})",
                           &out, &err));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].samples, std::vector<Sample>{(Sample{1767225600.25, 1})});
  ASSERT_TRUE(parse_answer(R"({"status":"success","data":{"resultType":"scalar","result":[1,"-2.5e3"]}})", &out, &err));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].samples, std::vector<Sample>{(Sample{1, -2500})});
  ASSERT_TRUE(parse_answer(R"({"status":"success","data":{"resultType":"vector","result":[]}})", &out, &err));
  EXPECT_TRUE(out.empty());
}

TEST(PrometheusApi, LeavesOutNativeHistogramSamples) {
  std::vector<Series> out;
  std::string err;
  ASSERT_TRUE(parse_answer(R"({"status":"success","data":{"resultType":"matrix","result":[
      {"metric":{"__name__":"h"},"histograms":[[1,{"count":"2","sum":"3"}]]}]}})",
                           &out, &err))
      << err;
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].samples.empty());
}

TEST(PrometheusApi, APrometheusErrorIsItsTypeAndText) {
  std::vector<Series> out;
  std::string err;
  EXPECT_FALSE(parse_answer(R"({"status":"error","errorType":"bad_data","error":"1:5: parse error: unexpected }"})",
                            &out, &err));
  EXPECT_EQ(err, "bad_data: 1:5: parse error: unexpected }");
  EXPECT_FALSE(parse_answer(R"({"status":"error"})", &out, &err));
  EXPECT_EQ(err, "an error without its text");
}

struct Malformed {
  const char* body;
  const char* err;
};

TEST(PrometheusApi, RefusesMalformedAnswersSayingWhat) {
  const Malformed rows[] = {
      {"", "not JSON"},
      {"<html>502 Bad Gateway</html>", "not JSON"},
      {R"({"status":"success","data":{"resultType":"matrix","result":[)", "not JSON"},
      {"[1,2]", "not a JSON object"},
      {R"({"data":{}})", "no \"status\": \"success\""},
      {R"({"status":7,"data":{}})", "no \"status\": \"success\""},
      {R"({"status":"success"})", "no \"data\" object"},
      {R"({"status":"success","data":[]})", "no \"data\" object"},
      {R"({"status":"success","data":{"resultType":"matrix"}})", "no data.result"},
      {R"({"status":"success","data":{"result":[]}})", "no data.resultType"},
      {R"({"status":"success","data":{"resultType":5,"result":[]}})", "no data.resultType"},
      {R"({"status":"success","data":{"resultType":"string","result":[1,"a"]}})",
       "a result of type \"string\", not a matrix, vector or scalar"},
      {R"({"status":"success","data":{"resultType":"matrix","result":{}}})", "data.result is not an array"},
      {R"({"status":"success","data":{"resultType":"matrix","result":[7]}})", "a result is not an object"},
      {R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":[]}]}})",
       "a series' \"metric\" is not an object"},
      {R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"gpu":0}}]}})",
       "the label gpu is not a string"},
      {R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":{}}]}})",
       "a series' \"values\" is not an array"},
      {R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1]]}]}})",
       "a sample is not [time, \"value\"]: [1]"},
      {R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[["1","2"]]}]}})",
       "a sample is not [time, \"value\"]: [\"1\",\"2\"]"},
      {R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"two"]}]}})",
       "a sample is not [time, \"value\"]: [1,\"two\"]"},
      {R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,""]}]}})",
       "a sample is not [time, \"value\"]: [1,\"\"]"},
      {R"({"status":"success","data":{"resultType":"scalar","result":"1"}})", "a sample is not [time, \"value\"]: \"1\""},
  };
  for (const Malformed& row : rows) {
    std::vector<Series> out = {Series{}};
    std::string err;
    EXPECT_FALSE(parse_answer(row.body, &out, &err)) << row.body;
    EXPECT_EQ(err, row.err) << row.body;
    EXPECT_TRUE(out.empty()) << row.body;
  }
}

TEST(PrometheusApi, ParsesDurations) {
  const std::pair<const char*, double> good[] = {{"14d", 14 * 86400.0}, {"1h30m", 5400}, {"90s", 90},
                                                 {"500ms", 0.5},        {"2w", 14 * 86400.0}, {"1y", 365 * 86400.0},
                                                 {"1d12h", 129600},     {"1m1s1ms", 61.001}};
  for (const auto& [text, seconds] : good) {
    double s = 0;
    EXPECT_TRUE(parse_duration(text, &s)) << text;
    EXPECT_DOUBLE_EQ(s, seconds) << text;
  }
  for (const char* bad : {"", "14", "d", "1.5h", "30m1h", "1h1h", "-1h", "1 h", "0s", "1x", "1hm", "14dd"}) {
    double s = 0;
    EXPECT_FALSE(parse_duration(bad, &s)) << bad;
  }
}

TEST(PrometheusApi, ParsesTimes) {
  const std::pair<const char*, double> good[] = {
      {"1767225600", 1767225600},
      {"1767225600.5", 1767225600.5},
      {"2026-01-01", 1767225600},
      {"2026-01-01T00:00:00Z", 1767225600},
      {"2026-01-01T01:02:03.25Z", 1767225600 + 3723.25},
      {"2026-01-01T01:00:00+01:00", 1767225600},
      {"2025-12-31T19:00:00-05:00", 1767225600},
      {"2026-01-01 00:00:00Z", 1767225600},
  };
  for (const auto& [text, t] : good) {
    double got = 0;
    EXPECT_TRUE(parse_time(text, &got)) << text;
    EXPECT_DOUBLE_EQ(got, t) << text;
  }
  for (const char* bad : {"", "now", "yesterday", "2026-13-01", "2026-01-01T00:00:00", "2026-01-01T25:00:00Z",
                          "2026-01-01T00:00Z", "2026-01-01T00:00:00.Z", "2026-01-01T00:00:00+1:00", "1e9", "-5",
                          "1.2.3", "2026-1-1"}) {
    double got = 0;
    EXPECT_FALSE(parse_time(bad, &got)) << bad;
  }
}

TEST(PrometheusApi, TakesOnlyHttpUrlsWithAHost) {
  std::string err;
  for (const char* ok : {"http://prom:9090", "https://prom.example.org/prometheus/", "http://127.0.0.1:9090"})
    EXPECT_TRUE(valid_base_url(ok, &err)) << ok;
  for (const char* bad : {"prom:9090", "ftp://prom", "file:///etc/passwd", "http://", "http:///x",
                          "http://prom:9090/?query=up", "http://prom #x"})
    EXPECT_FALSE(valid_base_url(bad, &err)) << bad;
  valid_base_url("prom:9090", &err);
  EXPECT_EQ(err, "\"prom:9090\" is not an http:// or https:// URL (e.g. http://prometheus:9090)");
}

// A Client whose GET answers `status` and `body`, or fails with `fail`.
Client canned(long status, std::string body, std::string fail = "", std::string* asked = nullptr) {
  return Client("http://prom:9090", [=](const std::string& url, sys::HttpResponse* r, std::string* err) {
    if (asked) *asked = url;
    if (!fail.empty()) {
      *err = "GET " + url + ": " + fail;
      return false;
    }
    r->status = status;
    r->body = body;
    return true;
  });
}

TEST(PrometheusApi, ClientAsksAndParses) {
  std::string asked, err;
  std::vector<Series> out;
  Client c = canned(200, R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":"b"},"value":[1,"2"]}]}})",
                    "", &asked);
  ASSERT_TRUE(c.query("up", 1, &out, &err)) << err;
  EXPECT_EQ(asked, "http://prom:9090/api/v1/query?query=up&time=1.000");
  ASSERT_EQ(out.size(), 1u);
  ASSERT_TRUE(c.query_range({"up", 0, 60, 15}, &out, &err)) << err;
  EXPECT_EQ(asked, "http://prom:9090/api/v1/query_range?query=up&start=0.000&end=60.000&step=15.000");
}

TEST(PrometheusApi, ClientFailuresNamePrometheusAndWhatFailed) {
  std::vector<Series> out;
  std::string err;
  EXPECT_FALSE(canned(0, "", "Failed to connect to prom port 9090: Connection refused").query_range({"up", 0, 60, 15}, &out, &err));
  EXPECT_EQ(err, "Prometheus at http://prom:9090 (/api/v1/query_range): Failed to connect to prom port 9090: Connection refused");
  EXPECT_FALSE(canned(400, R"({"status":"error","errorType":"bad_data","error":"parse error"})").query("up{", 0, &out, &err));
  EXPECT_EQ(err, "Prometheus at http://prom:9090 (/api/v1/query): HTTP 400: bad_data: parse error");
  EXPECT_FALSE(canned(200, "<html>").query("up", 0, &out, &err));
  EXPECT_EQ(err, "Prometheus at http://prom:9090 (/api/v1/query): the answer is not the query API's JSON: not JSON");
  EXPECT_FALSE(canned(404, "404 page not found").query("up", 0, &out, &err));
  EXPECT_EQ(err, "Prometheus at http://prom:9090 (/api/v1/query): HTTP 404: not JSON (is that Prometheus's address, "
                 "with its path prefix if it has one?)");
  EXPECT_FALSE(canned(302, "").query("up", 0, &out, &err));
  EXPECT_NE(err.find("HTTP 302: not JSON (a redirect, and gpuenv follows none: give the URL it points to)"),
            std::string::npos)
      << err;
  EXPECT_FALSE(canned(503, R"({"status":"success","data":{"resultType":"vector","result":[]}})").query("up", 0, &out, &err));
  EXPECT_EQ(err, "Prometheus at http://prom:9090 (/api/v1/query): HTTP 503: an answer of success");
  EXPECT_TRUE(out.empty());
}

// The fuzzer's seeds (tests/corpus/prometheus_api_fuzz/): the answers parse
// as their names say, and the rest are refused saying why.
TEST(PrometheusApi, TheFuzzSeedsParseOrAreRefused) {
  const std::map<std::string, bool> parses = {{"matrix.json", true},  {"vector.json", true},
                                              {"scalar.json", true},  {"histogram.json", true},
                                              {"error.json", false},  {"truncated.json", false}};
  std::size_t seen = 0;
  for (const auto& e : std::filesystem::directory_iterator(test_paths::tests_dir() + "/corpus/prometheus_api_fuzz")) {
    std::ifstream in(e.path());
    std::stringstream body;
    body << in.rdbuf();
    std::vector<Series> out;
    std::string err;
    bool ok = parse_answer(body.str(), &out, &err);
    auto it = parses.find(e.path().filename().string());
    if (it == parses.end()) continue;
    ++seen;
    EXPECT_EQ(ok, it->second) << e.path() << ": " << err;
    EXPECT_EQ(err.empty(), ok) << e.path();
  }
  EXPECT_EQ(seen, parses.size());
}

}  // namespace
}  // namespace gpuenv::prom
