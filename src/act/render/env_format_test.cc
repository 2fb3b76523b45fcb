#include "act/render/env_format.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <sstream>

#include "process.h"

namespace gpuenv {
namespace {

using testing::run_process;

// Values from outside (GPU names, paths) that must survive eval unchanged.
// A decided setting with just a name and a value: all the formats read.
Setting var(const std::string& name, const std::string& value) {
  Setting s;
  s.name = name;
  s.value = value;
  return s;
}

const std::vector<std::string> kHostile = {
    "plain",
    "",
    "it's",
    "'",
    "''",
    "\"double\"",
    "$HOME",
    "${PATH}",
    "`id`",
    "$(touch /tmp/gpuenv-pwned)",
    "a\nb",
    "\n",
    "tab\there",
    "back\\slash\\",
    "semi;colon && or || pipe | amp &",
    "glob * ? [a-z]",
    "~root",
    "#comment",
    "-n",
    "\xe2\x98\x83 unicode",
    "trailing space ",
};

std::string eval_and_print(const std::string& script) {
  // POSIX sh evals the rendering, then prints X byte for byte.
  auto r = run_process({"sh", "-c", "eval \"$1\" && printf '%s' \"$X\"", "sh", script});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

TEST(EnvFormat, ShRoundTripsHostileValuesThroughEval) {
  for (const auto& v : kHostile) {
    std::string out, err;
    ASSERT_TRUE(format_env({var("X", v)}, EnvFormat::kSh, &out, &err)) << err;
    EXPECT_EQ(eval_and_print(out), v) << "rendered: " << out;
  }
}

TEST(EnvFormat, ShQuoteExact) {
  EXPECT_EQ(sh_quote("a"), "'a'");
  EXPECT_EQ(sh_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(sh_quote(""), "''");
}

TEST(EnvFormat, ShRendersExportLines) {
  std::string out, err;
  ASSERT_TRUE(format_env({var("A", "1"), var("B", "x y")}, EnvFormat::kSh, &out, &err));
  EXPECT_EQ(out, "export A='1'\nexport B='x y'\n");
}

TEST(EnvFormat, DotenvIsLiteralUnderItsHeader) {
  std::string out, err;
  ASSERT_TRUE(format_env({var("A", "it's $HOME")}, EnvFormat::kDotenv, &out, &err));
  EXPECT_EQ(out, std::string(kDotenvHeader) + "A=it's $HOME\n");
  EXPECT_NE(out.find("Do not source it from a\n# shell"), std::string::npos) << out;
  EXPECT_NE(out.find("/etc/profile.d/gpuenv.sh"), std::string::npos) << out;
}

TEST(EnvFormat, DotenvSkipsOnlyWhatItCannotCarryAndNamesIt) {
  std::string out, err;
  std::vector<std::string> skipped;
  ASSERT_TRUE(format_env({var("A", "a\nb"), var("B", "ok"), var("C", "cr\r"), var("D", std::string("n\0ul", 4)),
                          var("E", "not utf-8 \xff"), var("F", "caf\xc3\xa9")},
                         EnvFormat::kDotenv, &out, &err, &skipped))
      << err;
  EXPECT_EQ(skipped, (std::vector<std::string>{"A", "C", "D", "E"}));
  EXPECT_EQ(out, std::string(kDotenvHeader) + "B=ok\nF=caf\xc3\xa9\n");
}

// docker's --env-file, as documented (docs.docker.com, "docker container
// run", --env-file): NAME=VALUE lines, the value taken literally to the end
// of the line, no quote processing; lines starting with # are comments;
// blank lines are skipped (leading whitespace is trimmed first, and a
// trailing CR dropped, as its line scanner does).
std::map<std::string, std::string> docker_env_file(const std::string& text) {
  std::map<std::string, std::string> vars;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    line = line.substr(start);
    size_t eq = line.find('=');
    EXPECT_NE(eq, std::string::npos) << "docker would read \"" << line << "\" from its own environment";
    if (eq != std::string::npos) vars[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return vars;
}

// systemd's EnvironmentFile (systemd.exec(5)), for unquoted values: lines
// starting with # or ; are comments; leading and trailing whitespace is
// dropped; a backslash keeps the next character; a trailing backslash joins
// the next line. A value starting with a quote is read quoted (not modelled:
// the test keeps such values out).
std::map<std::string, std::string> systemd_environment_file(const std::string& text) {
  std::map<std::string, std::string> vars;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string raw = line.substr(eq + 1), value;
    for (size_t i = 0; i < raw.size(); ++i) value += raw[i] == '\\' && i + 1 < raw.size() ? raw[++i] : raw[i];
    size_t a = value.find_first_not_of(" \t\r"), b = value.find_last_not_of(" \t\r");
    vars[line.substr(0, eq)] = a == std::string::npos ? "" : value.substr(a, b - a + 1);
  }
  return vars;
}

// What gpuenv's values hold at worst: a user's kept setting, a path, a MIG
// UUID read from a snapshot.
const std::vector<std::string> kShellHostile = {
    "8.6;8.9",
    "backend:native;touch /tmp/gpuenv-pwned",
    "MIG-1;touch${IFS}/tmp/gpuenv-pwned;#",
    "$(touch /tmp/gpuenv-pwned)",
    "`touch /tmp/gpuenv-pwned`",
    "${IFS}x${IFS}",
    "a b  c",
    "* ? [a-z] ~",
    "semi;colon && or || pipe | amp & > redirect",
    "#not a comment",
    "it's \"quoted\"",
    "back\\slash\\",
    "'leading quote",
    " surrounding space ",
    "$HOME ${PATH}",
    "",
};

TEST(EnvFormat, DockerReadsTheDotenvRenderingBackExactly) {
  std::vector<Setting> settings;
  for (size_t i = 0; i < kShellHostile.size(); ++i) settings.push_back(var("X" + std::to_string(i), kShellHostile[i]));
  std::string out, err;
  std::vector<std::string> skipped;
  ASSERT_TRUE(format_env(settings, EnvFormat::kDotenv, &out, &err, &skipped)) << err;
  EXPECT_TRUE(skipped.empty());
  auto read = docker_env_file(out);
  ASSERT_EQ(read.size(), settings.size()) << out;
  for (const auto& s : settings) EXPECT_EQ(read[s.name], s.value) << s.name;
}

// systemd reads the same file exactly unless a value has a backslash, starts
// with a quote, or starts or ends with whitespace (docs/container.md).
TEST(EnvFormat, SystemdReadsTheDotenvRenderingBackExceptItsEscapes) {
  std::vector<Setting> settings;
  for (size_t i = 0; i < kShellHostile.size(); ++i) {
    const std::string& v = kShellHostile[i];
    bool systemd_differs = v.find('\\') != std::string::npos || (!v.empty() && (v[0] == '\'' || v[0] == '"')) ||
                           (!v.empty() && (v.front() == ' ' || v.back() == ' '));
    if (!systemd_differs) settings.push_back(var("X" + std::to_string(i), v));
  }
  ASSERT_GE(settings.size(), 12u);
  std::string out, err;
  ASSERT_TRUE(format_env(settings, EnvFormat::kDotenv, &out, &err)) << err;
  auto read = systemd_environment_file(out);
  ASSERT_EQ(read.size(), settings.size()) << out;
  for (const auto& s : settings) EXPECT_EQ(read[s.name], s.value) << s.name;
}

// The sh rendering, sourced as a file (/etc/profile.d/gpuenv.sh is), by
// bash and by dash: every value comes back byte for byte, nothing runs.
TEST(EnvFormat, ShSourcedByBashAndDashKeepsEveryValueAndRunsNothing) {
  std::filesystem::remove("/tmp/gpuenv-pwned");
  std::vector<std::string> values = kShellHostile;
  for (const auto& v : kHostile) values.push_back(v);
  for (size_t i = 0; i < values.size(); ++i) {
    std::string out, err;
    ASSERT_TRUE(format_env({var("X", values[i])}, EnvFormat::kSh, &out, &err)) << err;
    std::string file = testing::write_temp_file("gpuenv.sh", out);
    for (const char* shell : {"bash", "dash"}) {
      auto r = run_process({shell, "-c", ". \"$1\" && printf %s \"$X\"", shell, file});
      EXPECT_EQ(r.exit_code, 0) << shell << ": " << r.err;
      EXPECT_EQ(r.out, values[i]) << shell << " read back " << out;
      EXPECT_EQ(r.err, "") << shell;
    }
  }
  EXPECT_FALSE(std::filesystem::exists("/tmp/gpuenv-pwned"));
}

TEST(EnvFormat, JsonEscapes) {
  std::string out, err;
  ASSERT_TRUE(format_env({var("A", "q\"\n")}, EnvFormat::kJson, &out, &err));
  EXPECT_EQ(out, "{\n  \"A\": \"q\\\"\\n\"\n}\n");
}

TEST(EnvFormat, RejectsBadNames) {
  std::string out, err;
  for (const char* bad : {"", "1A", "A-B", "A B", "A=B", "$(x)"}) {
    EXPECT_FALSE(format_env({var(bad, "1")}, EnvFormat::kSh, &out, &err)) << bad;
    EXPECT_FALSE(valid_env_name(bad)) << bad;
  }
  EXPECT_TRUE(valid_env_name("_A1"));
}

TEST(EnvFormat, ParsesFormatNames) {
  EnvFormat f;
  EXPECT_TRUE(parse_env_format("sh", &f));
  EXPECT_EQ(f, EnvFormat::kSh);
  EXPECT_TRUE(parse_env_format("dotenv", &f));
  EXPECT_EQ(f, EnvFormat::kDotenv);
  EXPECT_TRUE(parse_env_format("json", &f));
  EXPECT_EQ(f, EnvFormat::kJson);
  EXPECT_FALSE(parse_env_format("bash", &f));
}

}  // namespace
}  // namespace gpuenv
