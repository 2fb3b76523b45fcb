#include "act/env_format.h"

#include <gtest/gtest.h>

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

TEST(EnvFormat, DotenvIsLiteral) {
  std::string out, err;
  ASSERT_TRUE(format_env({var("A", "it's $HOME")}, EnvFormat::kDotenv, &out, &err));
  EXPECT_EQ(out, "A=it's $HOME\n");
}

TEST(EnvFormat, DotenvRefusesNewlines) {
  std::string out, err;
  EXPECT_FALSE(format_env({var("A", "a\nb")}, EnvFormat::kDotenv, &out, &err));
  EXPECT_NE(err.find("A: the value holds a newline"), std::string::npos) << err;
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
