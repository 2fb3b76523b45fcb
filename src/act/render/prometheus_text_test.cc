#include "act/render/prometheus_text.h"

#include <gtest/gtest.h>

#include <limits>

namespace gpuenv::prometheus {
namespace {

TEST(PrometheusText, LabelValuesEscapeBackslashQuoteAndNewline) {
  struct Row {
    std::string in, out;
  } rows[] = {
      {"NVIDIA H200", "NVIDIA H200"},
      {"a\\b", "a\\\\b"},
      {"say \"hi\"", "say \\\"hi\\\""},
      {"two\nlines", "two\\nlines"},
      {"\\\"\n", "\\\\\\\"\\n"},
      {"tab\there", "tab\there"},      // the format escapes only the three
      {"caf\xc3\xa9", "caf\xc3\xa9"},  // UTF-8 passes
      {"bad\x9b", "bad\\\\x9b"},      // a byte that is not UTF-8 is spelled out (\\x9b), then escaped
      {"", ""},
  };
  for (const Row& r : rows) EXPECT_EQ(escape_label_value(r.in), r.out) << r.in;
}

TEST(PrometheusText, HelpEscapesBackslashAndNewlineOnly) {
  EXPECT_EQ(escape_help("a \\ b\nc \"d\""), "a \\\\ b\\nc \"d\"");
}

TEST(PrometheusText, ValuesReadBackAsTheSameDouble) {
  struct Row {
    double in;
    const char* out;
  } rows[] = {
      {0, "0"},
      {1, "1"},
      {0.75, "0.75"},
      {0.05, "0.05"},
      {150754820096.0, "150754820096"},
      {1980000000.0, "1980000000"},
      {325.375, "325.375"},
      {-2.5, "-2.5"},
      {1e300, "1e+300"},
      {std::numeric_limits<double>::infinity(), "+Inf"},
      {-std::numeric_limits<double>::infinity(), "-Inf"},
      {std::numeric_limits<double>::quiet_NaN(), "NaN"},
  };
  for (const Row& r : rows) EXPECT_EQ(format_value(r.in), r.out) << r.in;
}

TEST(PrometheusText, FamiliesWithHelpTypeAndSamples) {
  std::vector<MetricFamily> families = {
      {"up", Type::kGauge, "1 when up", {{{{"gpu", "0"}, {"name", "A \"B\""}}, 1}, {{{"gpu", "1"}}, 0}}},
      {"empty", Type::kGauge, "no samples: left out", {}},
      {"errors_total", Type::kCounter, "failures", {{{}, 3}}},
  };
  EXPECT_EQ(render(families),
            "# HELP up 1 when up\n"
            "# TYPE up gauge\n"
            "up{gpu=\"0\",name=\"A \\\"B\\\"\"} 1\n"
            "up{gpu=\"1\"} 0\n"
            "# HELP errors_total failures\n"
            "# TYPE errors_total counter\n"
            "errors_total 3\n");
}

TEST(PrometheusText, NothingToSayIsEmpty) { EXPECT_EQ(render({}), ""); }

}  // namespace
}  // namespace gpuenv::prometheus
