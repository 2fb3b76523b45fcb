// README says what the binary does (issue 22 item 6): its table of common
// flags names, for each flag, exactly the commands whose --help lists it; its
// sample `explain` output is the binary's on a checked-in snapshot.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "cli/commands.h"
#include "help_text.h"
#include "process.h"
#include "test_paths.h"
#include "text_files.h"

namespace gpuenv::testing {
namespace {

using Names = std::set<std::string>;

using testing::slurp;

// A row's commands, and for a command that takes the flag only beside
// another ("bench (with --history)"), that other flag.
struct Cell {
  Names commands;
  std::map<std::string, std::string> with;  // command -> the flag it needs beside
  std::size_t count(const std::string& command) const { return commands.count(command); }
};

// A cell's names: "every command", or "a, b (with --flag), c and d".
Cell command_names(std::string cell, const Names& every) {
  if (cell == "every command") return {every, {}};
  cell = std::regex_replace(cell, std::regex(" and "), ", ");
  Cell out;
  std::istringstream in(cell);
  static const std::regex qualified(R"(^(\S+) \(with (--[a-z0-9-]+)\)$)");
  for (std::string name; std::getline(in, name, ',');) {
    name = std::regex_replace(name, std::regex("^ +| +$"), "");
    std::smatch m;
    if (std::regex_match(name, m, qualified)) out.with[m[1]] = m[2], name = m[1];
    if (!name.empty()) out.commands.insert(name);
  }
  return out;
}

// README's common-flag table: flag -> the commands it lists.
std::map<std::string, Cell> readme_table(const std::string& readme, const Names& every) {
  std::map<std::string, Cell> table;
  auto at = readme.find("\n| flag | commands | meaning |");
  if (at == std::string::npos) return table;
  std::istringstream in(readme.substr(at + 1));
  std::string line;
  std::getline(in, line);  // the header
  std::getline(in, line);  // |---|
  static const std::regex row(R"(^\| `(--[a-z0-9-]+)[^`]*` \| ([^|]+) \|)");
  while (std::getline(in, line) && line.rfind("|", 0) == 0) {
    std::smatch m;
    if (std::regex_search(line, m, row)) table[m[1]] = command_names(m[2], every);
  }
  return table;
}

// The common flags, as Context::add_common_flags declares them, and
// --log-format (cli/app.cc: every command's).
Names common_flags() {
  CLI::App app;
  Context ctx;
  ctx.add_common_flags(&app, kEveryCommonFlag);
  Names out{"--log-format"};
  for (const CLI::Option* o : app.get_options())
    for (const auto& name : o->get_lnames()) out.insert("--" + name);
  out.erase("--help");
  return out;
}

TEST(FlagsReadme, TheFlagTableIsEachCommandsHelp) {
  Names every;
  for (const Command& c : commands()) every.insert(c.name);
  std::map<std::string, Cell> table = readme_table(slurp((test_paths::tests_dir() + "/../README.md")), every);
  ASSERT_FALSE(table.empty()) << "README has no \"| flag | commands | meaning |\" table";
  Names common = common_flags();
  for (const auto& flag : common)
    EXPECT_TRUE(table.count(flag)) << "README's flag table has no row for " << flag << ", a common flag";
  for (const auto& [flag, cell] : table) {
    EXPECT_TRUE(common.count(flag)) << "README's flag table lists " << flag
                                    << ", which is no common flag (cli/context.cc, cli/app.cc)";
    for (const auto& n : cell.commands)
      EXPECT_TRUE(every.count(n)) << "README's row for " << flag << " names \"" << n << "\", which is no command";
  }
  // For each command (or each of its subcommands), the common flags its
  // --help lists against the rows that name it.
  for (const std::string& command : every) {
    std::vector<std::vector<std::string>> forms;
    for (const auto& s : help_subcommands(command)) forms.push_back({command, s});
    if (forms.empty()) forms.push_back({command});
    for (const auto& args : forms) {
      std::string shown = "gpuenv " + args[0] + (args.size() > 1 ? " " + args[1] : "");
      Names listed = help_flags(args);
      for (const auto& flag : common) {
        bool in_help = listed.count(flag) > 0;
        bool in_readme = table.count(flag) && table[flag].count(command);
        EXPECT_EQ(in_help, in_readme) << shown << " --help " << (in_help ? "lists " : "does not list ") << flag
                                      << " but README's flag table " << (in_readme ? "says" : "does not say")
                                      << " " << command << " takes it";
      }
    }
  }
}

// The flag as a test passes it, with a value where it takes one.
std::vector<std::string> flag_with_value(const std::string& flag, const std::string& snapshot, const std::string& dir) {
  if (flag == "--machine") return {flag, snapshot};
  if (flag == "--cache-root") return {flag, dir};
  if (flag == "--python") return {flag, "/nonexistent/python3"};
  if (flag == "--log-format") return {flag, "json"};
  return {flag};
}

// What makes a command end soon, writing only under `dir`, once it has
// taken its flags: a program to run, a file to read, --once, a user that
// does not exist (serve starts nothing for one), no GPU to measure.
std::vector<std::string> quiet_args(const std::string& command, const std::string& dir) {
  if (command == "run") return {"--", "true"};
  if (command == "init") return {"--etc-dir", dir, "--profile-d", dir, "--", "true"};
  if (command == "labels") return {"--once", "--output", "-"};
  if (command == "bench") return {"--history", "--db", dir + "/gpuenv.db"};
  if (command == "report") return {"--db", dir + "/gpuenv.db"};
  if (command == "inspect") return {"/bin/true"};
  if (command == "plan-memory") return {"--model", "list"};
  if (command == "completion") return {"bash"};
  if (command == "serve") return {"--user", "gpuenv-test-no-such-user"};
  if (command == "export") return {"--listen", "127.0.0.1:0"};  // serves until the timeout kills it
  return {};
}

// README's table against the binary itself (issue 37 item 6): each flag is
// taken by every command its row names (no exit 2), with the flag the row
// puts in brackets beside it, and refused with exit 2, naming it, by every
// other. (That bench listed --machine and refused it was invisible to a
// test of --help alone.)
TEST(FlagsReadme, EachCommandTakesExactlyTheFlagsItsRowNames) {
  Names every;
  for (const Command& c : commands()) every.insert(c.name);
  std::map<std::string, Cell> table = readme_table(slurp((test_paths::tests_dir() + "/../README.md")), every);
  ASSERT_FALSE(table.empty());
  std::string dir = make_temp_dir("gpuenv-flags-readme");
  std::string snapshot = (test_paths::tests_dir() + "/machines/h200.json");
  ProcessOptions opts;
  opts.env = {{"GPUENV_CACHE_ROOT", dir}};
  for (const std::string& command : every) {
    std::vector<std::vector<std::string>> forms;
    for (const auto& s : help_subcommands(command)) forms.push_back({command, s});
    if (forms.empty()) forms.push_back({command});
    for (const auto& form : forms)
      for (const auto& [flag, cell] : table) {
        bool listed = cell.count(command) > 0;
        std::vector<std::string> args = form;
        for (const auto& a : flag_with_value(flag, snapshot, dir)) args.push_back(a);
        std::vector<std::string> quiet = quiet_args(command, dir);
        auto beside = [&](const Cell& c) {  // the flag a row puts in brackets, once
          if (c.with.count(command) && std::find(quiet.begin(), quiet.end(), c.with.at(command)) == quiet.end())
            quiet.push_back(c.with.at(command));
        };
        beside(cell);
        if (listed && flag != "--machine" && table["--machine"].count(command)) {  // no live sensing
          args.insert(args.end(), {"--machine", snapshot});
          beside(table["--machine"]);
        }
        args.insert(args.end(), quiet.begin(), quiet.end());
        opts.timeout_ms = command == "export" ? 3000 : 20000;
        ProcessResult r = run_gpuenv(args, opts);
        std::string shown = "gpuenv";
        for (const auto& a : args) shown += " " + a;
        if (listed) {
          EXPECT_NE(r.exit_code, 2) << shown << ": README's flag table says " << command << " takes " << flag
                                    << ", but the binary refuses it:\n" << r.err;
        } else {
          EXPECT_EQ(r.exit_code, 2) << shown << ": README's flag table does not list " << command << " for " << flag
                                    << ", but the binary takes it";
          EXPECT_NE(r.err.find(flag), std::string::npos) << shown << ": the refusal does not name " << flag << ":\n"
                                                         << r.err;
        }
      }
  }
}

// README's sample: "$ gpuenv explain --machine tests/machines/X.json" and
// the first lines of its output, up to "...": the binary's own. (Change
// the plan and this fails until README shows the new lines.)
TEST(FlagsReadme, TheSampleExplainIsTheBinarysOutput) {
  std::vector<std::string> readme = lines_of(slurp((test_paths::tests_dir() + "/../README.md")));
  std::smatch m;
  static const std::regex prompt(R"(^\$ gpuenv explain --machine (tests/machines/[A-Za-z0-9_.-]+\.json)$)");
  size_t at = 0;
  while (at < readme.size() && !std::regex_match(readme[at], m, prompt)) ++at;
  ASSERT_LT(at, readme.size()) << "README has no \"$ gpuenv explain --machine tests/machines/FILE.json\" sample";
  std::string snapshot = (test_paths::tests_dir() + "/../") + std::string(m[1]);
  std::vector<std::string> sample;
  for (size_t i = at + 1; i < readme.size() && readme[i] != "..." && readme[i] != "```"; ++i)
    sample.push_back(readme[i]);
  ASSERT_GE(sample.size(), 3u) << "README's explain sample shows under three lines";
  ProcessResult r = run_gpuenv({"explain", "--machine", snapshot});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> real = lines_of(r.out);
  ASSERT_GE(real.size(), sample.size()) << r.out;
  // The columns are as wide as the widest value, and some values (the
  // cache root under $HOME, PYTHONPATH beside the binary) are this
  // machine's: the cells are compared, not the padding.
  auto cells = [](const std::string& line) { return std::regex_replace(line, std::regex("  +"), "  "); };
  for (size_t i = 0; i < sample.size(); ++i)
    EXPECT_EQ(cells(sample[i]), cells(real[i])) << "README's explain sample, line " << i + 1
                                  << ", is not what the binary prints; its output:\n"
                                  << r.out;
}

}  // namespace
}  // namespace gpuenv::testing
