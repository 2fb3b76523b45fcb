// One interface (issue 13 item 9): every command that prints data takes
// --json; a flag that means nothing to a command is refused; explain prints
// whole lines when piped; every exit code is documented.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "builders.h"
#include "model/snapshot.h"
#include "process.h"
#include "test_paths.h"
#include "text_files.h"

namespace gpuenv::testing {
namespace {

using nlohmann::json;

using testing::contains;

std::string snapshot_file(const Machine& m) { return write_temp_file("machine.json", machine_to_json(m)); }

using testing::slurp;

// Command (with what it needs to get as far as judging flags) x a common
// flag it does not read. Each is a bad command line, and says which flag.
TEST(Interface, AFlagThatMeansNothingIsRefused) {
  struct Row {
    std::vector<std::string> command;
    std::vector<std::string> flag;
  };
  const std::vector<Row> rows = {
      {{"detect"}, {"--ptx"}},
      {{"detect"}, {"--override"}},
      {{"env"}, {"--no-color"}},
      {{"run"}, {"--no-color"}},
      {{"init"}, {"--no-color"}},
      {{"serve", "jupyter"}, {"--no-color"}},
      {{"doctor"}, {"--cuda"}},
      {{"doctor"}, {"--ptx"}},
      {{"doctor"}, {"--override"}},
      {{"labels"}, {"--cuda"}},
      {{"labels"}, {"--ptx"}},
      {{"labels"}, {"--override"}},
      {{"labels"}, {"--no-color"}},
      {{"inspect", "/bin/true"}, {"--ptx"}},
      {{"inspect", "/bin/true"}, {"--override"}},
      {{"inspect", "/bin/true"}, {"--no-color"}},
      {{"inspect", "/bin/true"}, {"--cache-root", "/tmp"}},
      {{"inspect", "/bin/true"}, {"--python", "/usr/bin/python3"}},
      {{"bench"}, {"--ptx"}},
      {{"bench"}, {"--override"}},
      {{"bench"}, {"--cuda"}},
      {{"bench"}, {"--python", "/usr/bin/python3"}},
      {{"check"}, {"--ptx"}},
      {{"check"}, {"--override"}},
      {{"export"}, {"--ptx"}},
      {{"export"}, {"--override"}},
      {{"export"}, {"--no-color"}},
      {{"report"}, {"--no-color"}},
      {{"report"}, {"--machine", "/tmp/x.json"}},
      {{"plan-memory"}, {"--no-color"}},
      {{"plan-memory"}, {"--ptx"}},
  };
  for (const auto& row : rows) {
    std::vector<std::string> args = row.command;
    args.insert(args.end(), row.flag.begin(), row.flag.end());
    if (row.command[0] == "run" || row.command[0] == "init") args.insert(args.end(), {"--", "true"});
    SCOPED_TRACE(args[0] + " " + row.flag[0]);
    auto r = run_gpuenv(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(contains(r.err, row.flag[0])) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

// The flags a command does read are taken (a snapshot keeps them quick).
TEST(Interface, TheFlagsACommandReadsAreTaken) {
  std::string h200 = snapshot_file(machine::h200());
  for (std::vector<std::string> args :
       {std::vector<std::string>{"explain", "--ptx", "--override", "--no-color", "--cuda"},
        {"env", "--ptx", "--override", "--cache-root", "/tmp/gpuenv-interface"},
        {"detect", "--no-color", "--cuda"},
        {"doctor", "--no-color", "--cache-root", "/tmp/gpuenv-interface"},
        {"inspect", "--cuda", "/bin/true"}}) {
    args.insert(args.end(), {"--machine", h200});
    SCOPED_TRACE(args[0]);
    auto r = run_gpuenv(args);
    EXPECT_NE(r.exit_code, 2) << r.err;
    EXPECT_FALSE(contains(r.err, "not expected")) << r.err;
  }
}

TEST(Interface, EveryCommandThatPrintsDataTakesJson) {
  std::string h200 = snapshot_file(machine::h200());
  for (std::vector<std::string> args : {std::vector<std::string>{"detect"}, {"env"}, {"explain"}, {"doctor"},
                                        {"doctor", "--list"}, {"labels"}, {"inspect", "/bin/true"}}) {
    if (args != std::vector<std::string>{"doctor", "--list"}) args.insert(args.end(), {"--machine", h200});
    args.push_back("--json");
    SCOPED_TRACE(args[0] + " " + args[1]);
    auto r = run_gpuenv(args);
    EXPECT_LT(r.exit_code, 5) << r.err;
    json j = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.out;
  }
}

TEST(Interface, EnvJsonIsFormatJson) {
  std::string h200 = snapshot_file(machine::h200());
  auto a = run_gpuenv({"env", "--json", "--machine", h200});
  auto b = run_gpuenv({"env", "--format", "json", "--machine", h200});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_TRUE(json::parse(a.out).contains("TORCH_CUDA_ARCH_LIST")) << a.out;
  auto both = run_gpuenv({"env", "--json", "--format", "sh", "--machine", h200});
  EXPECT_EQ(both.exit_code, 2) << both.err;
}

TEST(Interface, DoctorListJsonIsTheList) {
  auto text = run_gpuenv({"doctor", "--list"});
  auto j = json::parse(run_gpuenv({"doctor", "--list", "--json"}).out);
  std::istringstream in(text.out);
  size_t i = 0;
  for (std::string line; std::getline(in, line); ++i) {
    ASSERT_LT(i, j.size());
    EXPECT_EQ(line, j[i]["name"].get<std::string>() + "\t" + j[i]["summary"].get<std::string>());
  }
  EXPECT_EQ(i, j.size());
}

// labels --json: the same labels as the feature file, with their prefix.
TEST(Interface, LabelsJsonHoldsTheFileLabels) {
  std::string h200 = snapshot_file(machine::h200());
  auto file = run_gpuenv({"labels", "--once", "--output", "-", "--machine", h200});
  auto j = json::parse(run_gpuenv({"labels", "--json", "--machine", h200}).out);
  ASSERT_EQ(file.exit_code, 0) << file.err;
  std::set<std::string> from_file, from_json;
  std::istringstream in(file.out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') from_file.insert(line);
  for (const auto& [name, value] : j["labels"].items()) from_json.insert(name + "=" + value.get<std::string>());
  EXPECT_EQ(from_json, from_file);
  EXPECT_TRUE(j["expiry"].is_string());
  EXPECT_EQ(run_gpuenv({"labels", "--json", "--output", "/tmp/x", "--machine", h200}).exit_code, 2);
}

// Piped (not a terminal) with no $COLUMNS, explain prints each row whole: a
// row holds its setting's full reason (a $COLUMNS set for the pipe fits it,
// issue 37: Cli.ExplainFitsColumnsAndWideShowsValuesWhole).
TEST(Interface, ExplainPipedPrintsWholeLines) {
  std::string h200 = snapshot_file(machine::h200());
  ProcessOptions unset;
  unset.env["COLUMNS"] = "";
  auto text = run_gpuenv({"explain", "--machine", h200}, unset);
  auto plan = json::parse(run_gpuenv({"explain", "--json", "--machine", h200}).out);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  ASSERT_FALSE(plan["settings"].empty());
  for (const auto& s : plan["settings"]) {
    std::regex row("\n" + s["name"].get<std::string>() + " +[^\n]*  " +
                   std::regex_replace(s["reason"].get<std::string>(), std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                   "\n");
    EXPECT_TRUE(std::regex_search(text.out, row)) << s["name"] << "\n" << text.out;
  }
}

// Every code in model/exit_codes.h is in the README's "Exit codes" table.
TEST(Interface, EveryExitCodeIsDocumented) {
  std::string header = slurp((test_paths::tests_dir() + "/../src/model/exit_codes.h"));
  std::string readme = slurp((test_paths::tests_dir() + "/../README.md"));
  auto at = readme.find("### Exit codes");
  ASSERT_NE(at, std::string::npos);
  std::string table = readme.substr(at, readme.find("\n## ", at) - at);
  std::regex code(R"(k(?:Exit|Nagios)\w+ = (\d+))");
  int seen = 0;
  for (auto it = std::sregex_iterator(header.begin(), header.end(), code); it != std::sregex_iterator(); ++it, ++seen) {
    std::string n = (*it)[1];
    EXPECT_TRUE(std::regex_search(table, std::regex("\n\\| [^|]*\\b" + n + "\\b"))) << n << " (" << (*it)[0] << ")";
  }
  EXPECT_GE(seen, 12);
}

}  // namespace
}  // namespace gpuenv::testing
