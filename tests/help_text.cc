#include "help_text.h"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "cli/commands.h"
#include "process.h"

namespace gpuenv::testing {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::set<std::string> help_flags(const std::vector<std::string>& args) {
  std::vector<std::string> a = args;
  a.push_back("--help");
  ProcessResult r = run_gpuenv(a);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> flags;
  static const std::regex option(R"(^ {1,8}(?:-[A-Za-z], *)?(--[a-z0-9][a-z0-9-]*))");
  for (const auto& line : lines_of(r.out)) {
    std::smatch m;
    if (std::regex_search(line, m, option)) flags.insert(m[1]);
  }
  return flags;
}

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

std::vector<std::vector<std::string>> command_forms() {
  std::vector<std::vector<std::string>> out;
  for (const Command& c : commands()) {
    std::vector<std::string> subs = help_subcommands(c.name);
    if (subs.empty()) out.push_back({c.name});
    for (const auto& s : subs) out.push_back({c.name, s});
  }
  return out;
}

}  // namespace gpuenv::testing
