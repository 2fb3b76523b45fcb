// --log-format json (GPUENV_LOG_FORMAT=json) end to end: for each command's
// failure or warning path, every stderr line is one JSON object with time,
// level, msg and command, stdout and the exit status are those of text
// mode, and text mode's stderr is the lines it has always printed.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "builders.h"
#include "model/snapshot.h"
#include "process.h"
#include "text_files.h"

namespace gpuenv::testing {
namespace {

using nlohmann::json;

using testing::contains;

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

struct Case {
  std::string what;
  std::vector<std::string> args;  // args[0] the command; --log-format goes after it
  std::map<std::string, std::string> env;
  std::string text_line;  // a line text mode prints, verbatim
  std::string level;      // the level of at least one JSON line
  std::string msg;        // ... and its msg
};

std::string snapshot_file(const Machine& m) { return write_temp_file("machine.json", machine_to_json(m)); }

std::vector<Case> cases() {
  std::string h200 = snapshot_file(machine::h200());
  std::string bad = write_temp_file("bad.json", R"({"schema_version": 1, "gpus": [{"index": 0, "compute_capability": 9}]})");
  std::string weird = "/nonexistent/a\"b\nc\x01\xff.json";  // quotes, newline, control, not UTF-8
  auto lost = stand_in_env("gpu_lost");
  auto mismatch = stand_in_env("init_version_mismatch");
  auto sick = stand_in_env("h100_sick_4");
  auto dotenv = std::map<std::string, std::string>{{"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "a\nb"}};
  return {
      {"detect, a lost GPU", {"detect"}, lost, "GPU 1: problem: ", "error", "problem"},
      {"detect, driver mismatch", {"detect", "--json"}, mismatch, "problem: ", "error", "problem"},
      {"detect, no NVIDIA software", {"detect"}, {}, "problem: ", "warning", "problem"},
      {"env, missing snapshot", {"env", "--machine", "/nonexistent/m.json"}, {},
       "gpuenv: cannot read the snapshot: open(/nonexistent/m.json): No such file or directory; pass a "
       "snapshot written by `gpuenv detect --json > FILE`",
       "error", "snapshot"},
      {"env, invalid snapshot", {"env", "--machine", bad}, {}, "", "error", "snapshot"},
      {"env, hostile file name", {"env", "--machine", weird}, {}, "", "error", "snapshot"},
      {"env, a lost GPU", {"env"}, lost, "", "warning", "note"},
      {"env, dotenv cannot carry a value", {"env", "--format", "dotenv", "--machine", h200}, dotenv,
       "gpuenv: warning: TORCH_ALLOW_TF32_CUBLAS_OVERRIDE left out: its value holds a newline, CR or NUL, or "
       "is not UTF-8, which a dotenv file cannot carry (--format sh or json have it)",
       "warning", "skipped"},
      {"env, bad --format", {"env", "--format", "bash"}, {}, "gpuenv: --format bash: expected sh, dotenv or json",
       "error", "usage"},
      {"explain, a lost GPU", {"explain"}, lost, "", "warning", "note"},
      {"run, no command", {"run"}, {}, "gpuenv: run: no command given; usage: gpuenv run [--] COMMAND [ARG...]",
       "error", "usage"},
      {"run, command not found", {"run", "--machine", h200, "--", "/nonexistent/cmd"}, {},
       "gpuenv: cannot run /nonexistent/cmd: No such file or directory", "error", "error"},
      {"run, a lost GPU", {"run", "--", "true"}, lost, "", "warning", "note"},
      {"doctor, a sick GPU", {"doctor"}, sick, "", "", ""},
      {"doctor, missing snapshot", {"doctor", "--machine", "/nonexistent/m.json"}, {}, "", "error", "snapshot"},
      {"labels, unwritable output", {"labels", "--once", "--machine", h200, "--output", "/proc/gpuenv/no"}, {},
       "", "error", "write failed"},
      {"inspect, missing file", {"inspect", "--machine", h200, "/nonexistent/lib.so"}, {}, "", "error", "file"},
      {"bench, no plugin", {"bench", "--no-store"}, {{"GPUENV_BENCH_PLUGIN", "/nonexistent/plugin.so"}}, "",
       "error", "plugin"},
      {"check, both modes", {"check", "--quick", "--long"}, {}, "gpuenv: check: --quick or --long, not both",
       "error", "usage"},
      {"a flag the command does not take", {"detect", "--ptx"}, {}, "gpuenv: detect does not take --ptx (gpuenv help detect lists its flags)",
       "error", "usage"},
  };
}

ProcessOptions options(const Case& c) {
  ProcessOptions o;
  o.env = c.env;
  return o;
}

std::vector<std::string> with_json(const std::vector<std::string>& args) {
  std::vector<std::string> out = {args[0], "--log-format", "json"};
  out.insert(out.end(), args.begin() + 1, args.end());
  return out;
}

// Every line one object: time (RFC 3339 UTC, ms), level, msg, command.
void expect_json_lines(const Case& c, const std::string& err) {
  static const std::regex kTime(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");
  bool found = c.msg.empty();
  for (const auto& line : lines_of(err)) {
    json j = json::parse(line, nullptr, false);
    ASSERT_TRUE(j.is_object()) << line;
    ASSERT_TRUE(j.contains("time") && j.contains("level") && j.contains("msg")) << line;
    EXPECT_TRUE(std::regex_match(j["time"].get<std::string>(), kTime)) << line;
    EXPECT_TRUE(j["level"] == "info" || j["level"] == "warning" || j["level"] == "error") << line;
    EXPECT_EQ(j["command"], c.args[0]) << line;
    found = found || (j["level"] == c.level && j["msg"] == c.msg);
  }
  EXPECT_TRUE(found) << "no " << c.level << " \"" << c.msg << "\" in\n" << err;
}

TEST(LogCli, EveryStderrLineIsJsonAndStdoutIsUnchanged) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.what);
    auto text = run_gpuenv(c.args, options(c));
    auto js = run_gpuenv(with_json(c.args), options(c));
    EXPECT_EQ(js.exit_code, text.exit_code) << js.err;
    if (c.args[0] != "detect" || c.args.size() < 2) {  // detect --json: a timestamp
      EXPECT_EQ(js.out, text.out);
    }
    EXPECT_FALSE(text.err.empty() && c.msg != "");
    EXPECT_FALSE(contains(text.err, "{\"time\"")) << text.err;
    if (!c.text_line.empty()) {
      EXPECT_TRUE(contains(text.err, c.text_line)) << text.err;
    }
    expect_json_lines(c, js.err);
    // The environment asks the same.
    ProcessOptions env = options(c);
    env.env["GPUENV_LOG_FORMAT"] = "json";
    auto by_env = run_gpuenv(c.args, env);
    EXPECT_EQ(by_env.exit_code, text.exit_code);
    expect_json_lines(c, by_env.err);
  }
}

TEST(LogCli, TheFlagWinsOverTheEnvironment) {
  ProcessOptions o;
  o.env["GPUENV_LOG_FORMAT"] = "json";
  auto r = run_gpuenv({"explain", "--log-format", "text", "--machine", "/nonexistent/m.json"}, o);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.err.rfind("gpuenv: cannot read the snapshot", 0), 0u) << r.err;
  o.env["GPUENV_LOG_FORMAT"] = "yaml";  // not read when the flag is given
  EXPECT_EQ(run_gpuenv({"explain", "--log-format=json", "--machine", "/nonexistent/m.json"}, o).exit_code, 3);
}

TEST(LogCli, ABadFormatIsAUsageErrorNamingIt) {
  auto flag = run_gpuenv({"detect", "--log-format", "yaml"});
  EXPECT_EQ(flag.exit_code, 2);
  EXPECT_TRUE(contains(flag.err, "--log-format yaml: expected text or json")) << flag.err;
  ProcessOptions o;
  o.env["GPUENV_LOG_FORMAT"] = "xml";
  auto env = run_gpuenv({"detect"}, o);
  EXPECT_EQ(env.exit_code, 2);
  EXPECT_TRUE(contains(env.err, "GPUENV_LOG_FORMAT=xml: expected text or json")) << env.err;
  EXPECT_TRUE(env.out.empty()) << env.out;
}

// Before a command is known: the environment's format, no "command".
TEST(LogCli, AnUnknownCommandIsLoggedInTheEnvironmentsFormat) {
  ProcessOptions o;
  o.env["GPUENV_LOG_FORMAT"] = "json";
  auto r = run_gpuenv({"frobnicate"}, o);
  EXPECT_EQ(r.exit_code, 2);
  json j = json::parse(r.err);
  EXPECT_EQ(j["msg"], "usage");
  EXPECT_EQ(j["command_word"], "frobnicate");
  EXPECT_FALSE(j.contains("command"));
}

// A program's own --log-format is its own: run does not read past `--`.
TEST(LogCli, RunLeavesTheProgramsArgumentsAlone) {
  auto r = run_gpuenv({"run", "--", "/nonexistent/cmd", "--log-format", "json"});
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_EQ(r.err.rfind("gpuenv: cannot run /nonexistent/cmd", 0), 0u) << r.err;
}

TEST(LogCli, EveryCommandTakesTheFlag) {
  for (const char* cmd : {"detect", "env", "explain", "run", "init", "doctor", "labels", "inspect", "bench", "check"}) {
    auto h = run_gpuenv({cmd, "--help"});
    EXPECT_TRUE(contains(h.out, "--log-format")) << cmd;
  }
  auto serve = run_gpuenv({"serve", "jupyter", "--help"});
  EXPECT_TRUE(contains(serve.out, "--log-format")) << serve.out;
}

}  // namespace
}  // namespace gpuenv::testing
