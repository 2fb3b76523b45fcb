// `gpuenv completion bash|zsh|fish` and `gpuenv man` (issue 37): written
// from the command table, they offer every command, and every flag each
// command's --help lists, and nothing else. bash's completion function and
// fish's `complete -C` are run for real; zsh's script is checked by `zsh -n`
// and read; the man page is rendered by man(1) without a warning.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "cli/commands.h"
#include "help_text.h"
#include "process.h"

namespace gpuenv::testing {
namespace {

using Words = std::set<std::string>;

bool installed(const std::string& program) {
  return run_process({"sh", "-c", "command -v " + program}).exit_code == 0;
}

std::string script(const std::string& shell) {
  ProcessResult r = run_gpuenv({"completion", shell});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return write_temp_file("gpuenv." + shell, r.out);
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// What bash's completion offers for the words typed so far, the last the
// one being completed ("" for a fresh word).
Words bash_offers(const std::string& file, const std::vector<std::string>& words) {
  std::string array;
  for (const auto& w : words) array += " " + quoted(w);
  std::string cmd = "source " + quoted(file) + "; COMP_WORDS=(gpuenv" + array + "); COMP_CWORD=" +
                    std::to_string(words.size()) + "; COMPREPLY=(); _gpuenv; printf '%s\\n' \"${COMPREPLY[@]}\"";
  ProcessResult r = run_process({"bash", "-c", cmd});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Words out;
  for (const auto& l : lines_of(r.out))
    if (!l.empty()) out.insert(l);
  return out;
}

Words long_flags(const Words& words) {
  Words out;
  for (const auto& w : words)
    if (w.rfind("--", 0) == 0) out.insert(w);
  return out;
}

Words every_command() {
  Words out;
  for (const Command& c : commands()) out.insert(c.name);
  return out;
}

std::vector<std::string> with(std::vector<std::string> v, const std::string& last) {
  v.push_back(last);
  return v;
}

TEST(Completion, BashOffersEveryCommandAndEachCommandsFlags) {
  std::string file = script("bash");
  Words top = bash_offers(file, {""});
  for (const auto& name : every_command()) EXPECT_TRUE(top.count(name)) << name;
  EXPECT_TRUE(top.count("--version"));
  EXPECT_EQ(bash_offers(file, {"det"}), Words{"detect"});
  for (const auto& form : command_forms()) {
    SCOPED_TRACE(form.size() > 1 ? form[0] + " " + form[1] : form[0]);
    EXPECT_EQ(long_flags(bash_offers(file, with(form, "--"))), help_flags(form));
  }
  EXPECT_EQ(bash_offers(file, {"serve", ""}), (Words{"jupyter", "ssh", "--help", "-h", "--log-format"}));
  EXPECT_EQ(bash_offers(file, {"completion", ""}), (Words{"bash", "zsh", "fish", "--help", "-h", "--log-format"}));
  // A flag's value, and a program's arguments, are the shell's own (files).
  EXPECT_TRUE(bash_offers(file, {"detect", "--machine", ""}).empty());
  EXPECT_TRUE(bash_offers(file, {"run", "--", "python", "--"}).empty());
  // The word after a flag that takes a value is that value, not a subcommand.
  EXPECT_TRUE(bash_offers(file, {"serve", "jupyter", "--python", "ssh", "--p"}).count("--port"));
}

// fish writes its history and variables under HOME and the XDG
// directories: a temporary one, never the runner's.
ProcessOptions fish_home() {
  static const std::string home = make_temp_dir("gpuenv-fish-home");
  ProcessOptions o;
  o.env = {{"HOME", home}, {"XDG_CONFIG_HOME", home + "/config"}, {"XDG_DATA_HOME", home + "/data"},
           {"XDG_CACHE_HOME", home + "/cache"}};
  return o;
}

// What fish completes for the command line `line` (its `complete -C`).
Words fish_offers(const std::string& file, const std::string& line) {
  ProcessResult r =
      run_process({"fish", "-c", "source " + quoted(file) + "; complete -C " + quoted(line)}, fish_home());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Words out;
  for (const auto& l : lines_of(r.out)) out.insert(l.substr(0, l.find('\t')));
  return out;
}

TEST(Completion, FishOffersEveryCommandAndEachCommandsFlags) {
  if (!installed("fish")) GTEST_SKIP() << "fish is not installed (make deps installs it)";
  std::string file = script("fish");
  EXPECT_EQ(run_process({"fish", "-n", file}, fish_home()).exit_code, 0);
  Words top = fish_offers(file, "gpuenv ");
  for (const auto& name : every_command()) EXPECT_TRUE(top.count(name)) << name;
  for (const auto& form : command_forms()) {
    SCOPED_TRACE(form.size() > 1 ? form[0] + " " + form[1] : form[0]);
    std::string line = "gpuenv";
    for (const auto& w : form) line += " " + w;
    EXPECT_EQ(long_flags(fish_offers(file, line + " --")), help_flags(form));
  }
}

TEST(Completion, ZshScriptParsesAndNamesEveryCommandAndFlag) {
  std::string file = script("zsh");
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (installed("zsh")) {
    ProcessResult r = run_process({"zsh", "-n", file});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  for (const auto& name : every_command()) EXPECT_NE(text.find("'" + name + ":"), std::string::npos) << name;
  for (const auto& form : command_forms())
    for (const auto& flag : help_flags(form))
      EXPECT_NE(text.find("'" + flag + ":"), std::string::npos) << form[0] << " " << flag;
  EXPECT_EQ(run_gpuenv({"completion", "tcsh"}).exit_code, 2);
}

// The man page: man(1) renders it without a warning, and it has a section
// for every command and names each flag its --help lists.
TEST(ManPage, RendersCleanlyAndNamesEveryCommandAndFlag) {
  ProcessResult page = run_gpuenv({"man"});
  ASSERT_EQ(page.exit_code, 0) << page.err;
  for (const auto& form : command_forms()) {
    std::string name = form[0] + (form.size() > 1 ? " " + form[1] : "");
    std::string roff;  // roff writes a hyphen as \-
    for (char c : name) roff += c == '-' ? std::string("\\-") : std::string(1, c);
    std::string title = ".SS \"gpuenv " + roff + "\"";
    EXPECT_NE(page.out.find(title), std::string::npos) << title;
  }
  if (!installed("man")) GTEST_SKIP() << "man-db is not installed (make deps installs it)";
  std::string file = write_temp_file("gpuenv.1", page.out);
  ProcessOptions o;
  o.env = {{"MANWIDTH", "100"}, {"HOME", make_temp_dir("gpuenv-man-home")}};
  ProcessResult r = run_process({"man", "--warnings", "-l", file}, o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "") << "man --warnings";
  for (const auto& form : command_forms()) {
    std::string name = "gpuenv " + form[0] + (form.size() > 1 ? " " + form[1] : "");
    EXPECT_NE(r.out.find(name), std::string::npos) << name;
    for (const auto& flag : help_flags(form))
      EXPECT_NE(r.out.find(flag), std::string::npos) << name << " " << flag;
  }
}

}  // namespace
}  // namespace gpuenv::testing
