// README says what the binary does (issue 22 item 6): its table of common
// flags names, for each flag, exactly the commands whose --help lists it; its
// sample `explain` output is the binary's on a checked-in snapshot.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "cli/commands.h"
#include "process.h"

namespace gpuenv::testing {
namespace {

using Names = std::set<std::string>;

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// A cell's names: "every command", or "a, b, c and d".
Names command_names(std::string cell, const Names& every) {
  if (cell == "every command") return every;
  cell = std::regex_replace(cell, std::regex(" and "), ", ");
  Names out;
  std::istringstream in(cell);
  for (std::string name; std::getline(in, name, ',');) {
    name = std::regex_replace(name, std::regex("^ +| +$"), "");
    if (!name.empty()) out.insert(name);
  }
  return out;
}

// README's common-flag table: flag -> the commands it lists.
std::map<std::string, Names> readme_table(const std::string& readme, const Names& every) {
  std::map<std::string, Names> table;
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

// The flags `gpuenv ARGS --help` lists (its OPTIONS lines).
Names help_flags(const std::vector<std::string>& args) {
  std::vector<std::string> a = args;
  a.push_back("--help");
  ProcessResult r = run_gpuenv(a);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Names flags;
  static const std::regex option(R"(^ {1,8}(?:-[A-Za-z], *)?(--[a-z0-9][a-z0-9-]*))");
  for (const auto& line : lines_of(r.out)) {
    std::smatch m;
    if (std::regex_search(line, m, option)) flags.insert(m[1]);
  }
  return flags;
}

// The subcommands `gpuenv CMD --help` lists (serve's jupyter and ssh).
std::vector<std::string> help_subcommands(const std::string& command) {
  ProcessResult r = run_gpuenv({command, "--help"});
  std::vector<std::string> out;
  bool in_section = false;
  static const std::regex name(R"(^ {1,8}([a-z][a-z0-9-]*) )");
  for (const auto& line : lines_of(r.out)) {
    if (line.rfind("SUBCOMMANDS", 0) == 0 || line.rfind("Subcommands", 0) == 0) {
      in_section = true;
      continue;
    }
    std::smatch m;
    if (in_section && std::regex_search(line, m, name)) out.push_back(m[1]);
    else if (in_section && !line.empty() && line[0] != ' ') in_section = false;
  }
  return out;
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
  std::map<std::string, Names> table = readme_table(read(GPUENV_TESTS_DIR "/../README.md"), every);
  ASSERT_FALSE(table.empty()) << "README has no \"| flag | commands | meaning |\" table";
  Names common = common_flags();
  for (const auto& flag : common)
    EXPECT_TRUE(table.count(flag)) << "README's flag table has no row for " << flag << ", a common flag";
  for (const auto& [flag, names] : table) {
    EXPECT_TRUE(common.count(flag)) << "README's flag table lists " << flag
                                    << ", which is no common flag (cli/context.cc, cli/app.cc)";
    for (const auto& n : names)
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

// README's sample: "$ gpuenv explain --machine tests/machines/X.json" and
// the first lines of its output, up to "...": the binary's own. (Change
// the plan and this fails until README shows the new lines.)
TEST(FlagsReadme, TheSampleExplainIsTheBinarysOutput) {
  std::vector<std::string> readme = lines_of(read(GPUENV_TESTS_DIR "/../README.md"));
  std::smatch m;
  static const std::regex prompt(R"(^\$ gpuenv explain --machine (tests/machines/[A-Za-z0-9_.-]+\.json)$)");
  size_t at = 0;
  while (at < readme.size() && !std::regex_match(readme[at], m, prompt)) ++at;
  ASSERT_LT(at, readme.size()) << "README has no \"$ gpuenv explain --machine tests/machines/FILE.json\" sample";
  std::string snapshot = GPUENV_TESTS_DIR "/../" + std::string(m[1]);
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
