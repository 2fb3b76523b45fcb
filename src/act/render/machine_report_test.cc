#include "act/render/machine_report.h"
#include "act/render/report.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "builders.h"
#include "decide/decide.h"
#include "model/snapshot.h"
#include "test_paths.h"

namespace gpuenv {
namespace {

Setting setting(const std::string& name, const std::string& value, const std::string& reason,
                const std::string& rule, Origin origin,
                std::optional<std::string> user_value = std::nullopt) {
  Setting s;
  s.name = name;
  s.value = value;
  s.reason = reason;
  s.rule = rule;
  s.origin = origin;
  s.user_value = std::move(user_value);
  return s;
}

TEST(Report, CpuList) {
  EXPECT_EQ(cpu_list({}), "");
  EXPECT_EQ(cpu_list({3}), "3");
  EXPECT_EQ(cpu_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(cpu_list({5, 4, 4, 6}), "4-6");
}

TEST(Report, HumanBytes) {
  EXPECT_EQ(human_bytes(512), "512 B");
  EXPECT_EQ(human_bytes(64ull << 20), "64.0 MiB");
  EXPECT_EQ(human_bytes(3ull << 29), "1.5 GiB");
}

TEST(Report, PrintableEscapesControlCharacters) {
  EXPECT_EQ(printable("ok"), "ok");
  EXPECT_EQ(printable("a\nb\x1b[31m"), "a\\x0ab\\x1b[31m");
}

TEST(Report, DetectListsGpusAndMig) {
  Machine m = testing::machine::a100_mig();
  std::string out = render_detect(m, {});
  EXPECT_NE(out.find("NVIDIA driver 580.95.05, supports CUDA 13.0"), std::string::npos) << out;
  EXPECT_NE(out.find("GPU 0  NVIDIA A100-SXM4-80GB  cc 8.0  Ampere"), std::string::npos) << out;
  EXPECT_NE(out.find("  MIG 2  NVIDIA A100-SXM4-80GB MIG 2g.20gb"), std::string::npos) << out;
}

// NVML 18: the GPUs are there, unreadable until the reboot or reload; not
// "No NVIDIA GPU found" (issue 37).
TEST(Report, DetectSaysTheGpusAreUnreadableWhenTheDriverFails) {
  Machine m;
  m.nvidia.problems.push_back({"nvml", "nvml_version_mismatch", "nvmlInit_v2 failed: Driver/library version mismatch",
                               "reboot, or reload the nvidia kernel modules"});
  std::string out = render_detect(m, {});
  EXPECT_EQ(out.find("No NVIDIA GPU found"), std::string::npos) << out;
  EXPECT_NE(out.find("NVIDIA GPUs unreadable: the driver was upgraded but the old kernel module is still loaded"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("until a reboot or a reload of the nvidia modules"), std::string::npos) << out;
  m.nvidia.problems[0].code = "nvml_driver_not_loaded";
  out = render_detect(m, {});
  EXPECT_NE(out.find("NVIDIA GPUs unreadable: the driver failed"), std::string::npos) << out;
  EXPECT_EQ(out.find("No NVIDIA GPU found"), std::string::npos) << out;
}

TEST(Report, DetectWithoutGpuSaysSoAndShowsTheFix) {
  Machine m = testing::machine::none();
  std::string out = render_detect(m, {});
  EXPECT_NE(out.find("NVIDIA driver: not found"), std::string::npos) << out;
  EXPECT_NE(out.find("No NVIDIA GPU found"), std::string::npos) << out;
  EXPECT_EQ(out.find("problem:"), std::string::npos) << out;  // stderr's, below
  std::string problems = render_problems(m, {});
  EXPECT_NE(problems.find("fix: install the NVIDIA driver"), std::string::npos) << problems;
}

TEST(Report, HostileGpuNameIsNotPassedToTheTerminal) {
  Machine m = testing::machine::h100();
  m.gpus[0].name = "evil\x1b]0;pwned\x07";
  std::string out = render_detect(m, {});
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
  EXPECT_NE(out.find("evil\\x1b]0;pwned\\x07"), std::string::npos);
}

TEST(Report, ExplainTableMarksKeptAndShowsNotes) {
  Plan p;
  p.settings.push_back(setting("A", "1", "why a", "r", Origin::kDecided));
  p.settings.push_back(setting("LONGER_NAME", "v", "why b", "r", Origin::kKept, "v"));
  p.notes.push_back({Severity::kWarning, "nccl", "careful"});
  p.binding = CpuBinding{{0, 1, 2, 3}, "local"};
  std::string out = render_explain(p, {});
  EXPECT_NE(out.find("SETTING      VALUE  WHY\n"), std::string::npos) << out;
  EXPECT_NE(out.find("A            1      why a\n"), std::string::npos) << out;
  EXPECT_NE(out.find("LONGER_NAME  v      [kept] why b\n"), std::string::npos) << out;
  EXPECT_NE(out.find("CPU affinity: 0-3  (local)"), std::string::npos) << out;
  EXPECT_NE(out.find("warning [nccl]: careful"), std::string::npos) << out;
}

using Lines = std::vector<std::string>;

TEST(Report, WrapWordsBreaksAtSpacesWithinTheWidth) {
  EXPECT_EQ(wrap_words("the quick brown fox", 10, 10), (Lines{"the quick", "brown fox"}));
  EXPECT_EQ(wrap_words("the quick brown fox", 3, 15), (Lines{"the", "quick brown fox"}));
  EXPECT_EQ(wrap_words("a verylongword b", 5, 5), (Lines{"a", "verylongword", "b"}));  // never split
  EXPECT_EQ(wrap_words("fits exactly", 12, 4), (Lines{"fits exactly"}));
  EXPECT_EQ(wrap_words("no limit at all", 0, 0), (Lines{"no limit at all"}));
  EXPECT_EQ(wrap_words("", 5, 5), (Lines{""}));
  EXPECT_EQ(wrap_words("aaa  bbb", 3, 3), (Lines{"aaa", "bbb"}));  // the break eats the spaces
  EXPECT_EQ(wrap_words("x  y", 10, 10), (Lines{"x  y"}));          // kept where it fits
  // Columns are code points: "≥" and "×" are one each, three bytes each.
  EXPECT_EQ(wrap_words("a≥b c×d", 3, 3), (Lines{"a≥b", "c×d"}));
}

// On a terminal the WHY column wraps to its width, continuation lines
// under the column; every word is still there, in order.
TEST(Report, ExplainWrapsWhyToTheTerminal) {
  Plan p;
  std::string why = "one two three four five six seven eight nine ten eleven twelve thirteen";
  p.settings.push_back(setting("A", "1", why, "r", Origin::kDecided));
  p.settings.push_back(setting("B", std::string(12, 'v'), why, "r", Origin::kDecided));
  std::string out = render_explain(p, {}, 50);
  std::istringstream in(out);
  std::string line, words;
  size_t indent = std::string("SETTING  VALUE         ").size();
  int continuations = 0;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    EXPECT_LE(line.size(), 50u) << out;
    if (line.rfind(std::string(indent, ' '), 0) == 0) ++continuations;
  }
  EXPECT_EQ(continuations, 4) << out;
  std::string in_col(indent, ' ');
  EXPECT_NE(out.find("A        1             one two three four five six\n" + in_col +
                     "seven eight nine ten eleven\n" + in_col + "twelve thirteen\n"),
            std::string::npos)
      << out;
  // Narrower than 20 columns for WHY, it still keeps 20.
  EXPECT_NE(render_explain(p, {}, 30).find("A        1             one two three four\n"), std::string::npos);
  // Not a terminal: each row whole, as before.
  EXPECT_EQ(render_explain(p, {}, 0), render_explain(p, {}));
  EXPECT_NE(render_explain(p, {}).find("A        1" + std::string(13, ' ') + why + "\n"), std::string::npos)
      << render_explain(p, {});
}

TEST(Report, PlanJson) {
  Plan p;
  p.settings.push_back(setting("A", "1", "why", "tf32", Origin::kOverridden, "0"));
  std::string j = format_report(ExplainReport{p}, Format::kJson, {});
  EXPECT_NE(j.find("\"origin\": \"overridden\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"user_value\": \"0\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"cpu_binding\": null"), std::string::npos) << j;
}

// explain on the dgx-a100 snapshot (tests/machines/a100x8-nvlink.json,
// 14 settings) at 80 and 200 columns, byte for byte against
// tests/golden/explain_COLUMNS.txt (issue 37: at 80 columns the VALUE column
// was as wide as PYTHONPATH, and 15 settings took 131 lines).
// GPUENV_UPDATE_GOLDEN=1 rewrites them; review the diff before committing.
std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Plan dgx_a100_plan() {
  Machine m;
  std::string err;
  EXPECT_TRUE(machine_from_json(read_file((test_paths::tests_dir() + "/machines/a100x8-nvlink.json")), &m, &err)) << err;
  Options o;  // as the CLI builds them, with an installed hook and a user's cache root
  o.cache_root = "/home/researcher/.cache/gpuenv";
  o.python_hook_dir = "/home/researcher/.local/lib/gpuenv/python";
  o.env = m.env;
  for (const auto& [name, value] : m.env) o.from_snapshot.insert(name);
  return decide(m, o);
}

void expect_golden(const std::string& got, const std::string& name) {
  std::string path = (test_paths::tests_dir() + "/golden/") + name;
  if (const char* u = std::getenv("GPUENV_UPDATE_GOLDEN"); u && std::string(u) == "1") std::ofstream(path) << got;
  EXPECT_EQ(got, read_file(path)) << "tests/golden/" << name << " (GPUENV_UPDATE_GOLDEN=1 rewrites it)";
}

// The widest line of `text`, in code points, but for a continuation line
// that holds one word (wrap_words never splits a word).
std::size_t widest_line(const std::string& text) {
  std::size_t widest = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::size_t n = 0;
    for (unsigned char c : line) n += (c & 0xC0) != 0x80;
    bool one_word = line.rfind(' ', 0) == 0 && line.find(' ', line.find_first_not_of(' ')) == std::string::npos;
    if (!one_word) widest = std::max(widest, n);
  }
  return widest;
}

TEST(Report, ExplainFitsTheTerminalGolden) {
  Plan plan = dgx_a100_plan();
  ASSERT_GE(plan.settings.size(), 10u);
  std::string narrow = render_explain(plan, {}, 80), wide = render_explain(plan, {}, 200);
  expect_golden(narrow, "explain_80.txt");
  expect_golden(wide, "explain_200.txt");
  // The table fits: no line past the width (a word longer than WHY's column
  // aside, and the notes below the table, which are not wrapped).
  std::string table_80 = narrow.substr(0, narrow.find("\n\n"));
  EXPECT_LE(widest_line(table_80), 80u) << narrow;
  EXPECT_LE(narrow.find("WHY"), 80u - 24) << narrow;  // WHY keeps room: VALUE is no longer PYTHONPATH's width
  EXPECT_NE(narrow.find("--wide or --json shows it whole"), std::string::npos) << narrow;
  // Unwrapped (a pipe, --wide): every value whole.
  std::string whole = render_explain(plan, {}, 0);
  EXPECT_NE(whole.find("/home/researcher/.local/lib/gpuenv/python"), std::string::npos) << whole;
  EXPECT_EQ(whole.find("\u2026"), std::string::npos) << whole;
}

// A value is shortened in the middle, by code points, keeping its tail.
TEST(Report, ExplainShortensALongValueInTheMiddle) {
  Plan plan;
  plan.settings.push_back(make_setting("PYTHONPATH", "/a/very/long/directory/of/the/ho\u00f6k/python", "why"));
  std::string out = render_explain(plan, {}, 60);  // VALUE: 2/5 of 60 - 10 - 4, 18 columns
  EXPECT_NE(out.find("PYTHONPATH  /a/ve\u2026/ho\u00f6k/python  why"), std::string::npos) << out;
}

}  // namespace
}  // namespace gpuenv
