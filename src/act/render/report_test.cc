// The one output sink (act/render/report.h): format_report picks the face
// the Format asks for; every report a command prints has both faces (the
// list below fails to compile for one without); and through the sink the
// faces are the bytes the commands printed before it: detect --json is the
// committed snapshot of each fixture, explain's table the golden.
#include "act/render/report.h"

#include <gtest/gtest.h>

#include "act/render/bench/bench_report.h"
#include "act/render/bench/check_report.h"
#include "act/render/doctor_report.h"
#include "act/render/feedback_report.h"
#include "act/render/fleet_job_report.h"
#include "act/render/inspect_report.h"
#include "act/render/job_report.h"
#include "act/render/machine_report.h"
#include "act/render/memory_report.h"
#include "builders.h"
#include "decide/decide.h"
#include "sys/fs.h"
#include "test_paths.h"

namespace gpuenv {
namespace {

// Every report a command prints: a new one is added here, and cannot be
// without its JSON face.
static_assert(Report<DoctorReport>);
static_assert(Report<CheckListReport>);
static_assert(Report<DetectReport>);
static_assert(Report<ExplainReport>);
static_assert(Report<Feedback>);
static_assert(Report<InspectReport>);
static_assert(Report<MemoryPlanReport>);
static_assert(Report<PresetsReport>);
static_assert(Report<JobReport>);
static_assert(Report<JobsReport>);
static_assert(Report<FleetJobReport>);
static_assert(Report<bench::ResultsReport>);
static_assert(Report<bench::HistoryReport>);
static_assert(Report<bench::CheckReport>);

// A report of one number, whose text face shows the style it was given.
struct Tiny {
  int n = 0;
};
nlohmann::json report_json(const Tiny& t) { return {{"n", t.n}}; }
std::string report_text(const Tiny& t, const Style& s) {
  return "n = " + std::to_string(t.n) + (s.color ? " (colour)\n" : "\n");
}
static_assert(Report<Tiny>);

struct Ordered {
  std::string a;
};
nlohmann::ordered_json report_json(const Ordered& o) { return {{"z", 1}, {"a", o.a}}; }
std::string report_text(const Ordered& o, const Style&) { return o.a; }
static_assert(Report<Ordered>);

// Not reports: a face missing, or a face of the wrong type.
struct TextOnly {};
[[maybe_unused]] std::string report_text(const TextOnly&, const Style&) { return ""; }
struct JsonAsString {};
std::string report_json(const JsonAsString&) { return "{}"; }
[[maybe_unused]] std::string report_text(const JsonAsString&, const Style&) { return ""; }
static_assert(!Report<TextOnly>);
static_assert(!Report<JsonAsString>);

std::string read(const std::string& path) {
  std::string text, err;
  EXPECT_TRUE(fs::read_file(path, &text, &err)) << err;
  return text;
}

TEST(FormatReport, PicksTheFace) {
  EXPECT_EQ(format_report(Tiny{7}, Format::kJson, {}), "{\n  \"n\": 7\n}\n");
  EXPECT_EQ(format_report(Tiny{7}, Format::kText, {}), "n = 7\n");
  EXPECT_EQ(format_report(Tiny{7}, Format::kText, Style{true}), "n = 7 (colour)\n");
  EXPECT_EQ(format_report(Tiny{7}, Format::kJson, Style{true}), "{\n  \"n\": 7\n}\n");
}

TEST(FormatReport, TheJsonFlagChoosesTheFormat) {
  EXPECT_EQ(format_of(true), Format::kJson);
  EXPECT_EQ(format_of(false), Format::kText);
}

// A face in insertion order keeps it (explain's and plan-memory's JSON have
// always printed so); the one dump's escapes apply (model/json_text.h).
TEST(FormatReport, AnOrderedJsonFaceKeepsItsOrder) {
  EXPECT_EQ(format_report(Ordered{"a\xc2\x85"}, Format::kJson, {}),
            "{\n  \"z\": 1,\n  \"a\": \"a\\u0085\"\n}\n");
}

// detect --json, through the sink, is the committed snapshot of every
// fixture: what `detect --json` printed for it (tests/fixtures_test.cc
// holds each file equal to its builder's machine_to_json).
TEST(FormatReport, DetectJsonIsTheCommittedSnapshot) {
  for (const auto& f : testing::fixtures()) {
    SCOPED_TRACE(f.name);
    Machine m = f.make();
    EXPECT_EQ(format_report(DetectReport{m}, Format::kJson, {}),
              read(test_paths::tests_dir() + "/machines/" + f.name + ".json"));
  }
}

// explain's table, through the sink, is tests/golden/explain_COLUMNS.txt
// (machine_report_test.cc's ExplainFitsTheTerminalGolden: the dgx-a100
// snapshot, the options the CLI builds with a user's cache root).
TEST(FormatReport, ExplainTextIsTheGolden) {
  Machine m = testing::machine::a100_nvlink_8();
  Options o;
  o.cache_root = "/home/researcher/.cache/gpuenv";
  o.python_hook_dir = "/home/researcher/.local/lib/gpuenv/python";
  o.env = m.env;
  for (const auto& [name, value] : m.env) o.from_snapshot.insert(name);
  Plan plan = decide(m, o);
  for (std::size_t columns : {80, 200})
    EXPECT_EQ(format_report(ExplainReport{plan, columns}, Format::kText, {}),
              read(test_paths::tests_dir() + "/golden/explain_" + std::to_string(columns) + ".txt"));
}

}  // namespace
}  // namespace gpuenv
