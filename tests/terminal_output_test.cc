// Outside text reaching a terminal through the real binary: a hostile
// snapshot's error on stderr, and a hostile stored row in bench --history.
// Nothing may come out raw: no ESC, BEL, C1 CSI (U+009B) or lone 0x9B.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "builders.h"
#include "model/snapshot.h"
#include "process.h"
#include "store/fingerprint.h"
#include "store/store.h"
#include "test_paths.h"

namespace gpuenv {
namespace {

using testing::run_gpuenv;
using testing::write_temp_file;

const char* const kRaw[] = {"\x1b", "\x07", "\xc2\x9b", "\x9b"};

void expect_no_raw_controls(const std::string& text) {
  for (const char* raw : kRaw)
    EXPECT_EQ(text.find(raw), std::string::npos)
        << "raw byte 0x" << std::hex << int(static_cast<unsigned char>(raw[0])) << " in:\n" << text;
}

std::string hostile_snapshot(const std::string& cc_json) {
  std::string json = machine_to_json(testing::machine::h100());
  const std::string cc = "\"compute_capability\": \"9.0\"";
  size_t at = json.find(cc);
  EXPECT_NE(at, std::string::npos) << json;
  return json.replace(at, cc.size(), "\"compute_capability\": " + cc_json);
}

TEST(TerminalOutput, AHostileSnapshotsErrorIsEscapedOnStderr) {
  std::string file = write_temp_file("machine.json", hostile_snapshot(R"("\u001b]0;PWNED\u0007\u001b[2J\u009b31m")"));
  for (const char* command : {"detect", "explain", "env", "doctor"}) {
    auto r = run_gpuenv({command, "--machine", file});
    EXPECT_NE(r.exit_code, 0) << command;
    EXPECT_NE(r.err.find("\\x1b]0;PWNED\\x07\\x1b[2J\\u009b31m"), std::string::npos) << command << ": " << r.err;
    expect_no_raw_controls(r.err);
    expect_no_raw_controls(r.out);
  }
}

TEST(TerminalOutput, InvalidUtf8InASnapshotIsEscapedOnStderr) {
  std::string file = write_temp_file("machine.json", hostile_snapshot("\"\x9b" "2J\x1b[31m\""));
  auto r = run_gpuenv({"detect", "--machine", file});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("machine.json"), std::string::npos) << r.err;
  expect_no_raw_controls(r.err);
}

TEST(TerminalOutput, BenchHistoryEscapesAHostileStoredRow) {
  const std::string hostile = "\x1b]0;PWNED\x07\x1b[2J\xc2\x9b" "31m\x9b" "1m";
  Machine m = testing::machine::h100();
  std::string snapshot = write_temp_file("machine.json", machine_to_json(m));
  std::string path = write_temp_file("x", "") + ".db", err;
  {
    auto db = store::Store::open(path, &err);
    ASSERT_TRUE(db) << err;
    Measurement row;
    row.key = "gemm" + hostile, row.gpu_uuid = "GPU-" + hostile, row.unit = "GB/s" + hostile;
    row.status = "failed", row.detail = hostile, row.measured_at = "2025" + hostile;
    row.gpuenv_version = "0.1" + hostile;
    std::int64_t id = 0;
    store::Run run{store::fingerprint(m), "1x H100" + hostile, "bench", "2025", "0.1", "host", std::nullopt};
    ASSERT_TRUE(db->add_run(run, {row}, &id, &err)) << err;
  }
  auto r = run_gpuenv({"bench", "--history", "--machine", snapshot, "--db", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("gemm\\x1b]0;PWNED\\x07\\x1b[2J\\u009b31m\\x9b1m"), std::string::npos) << r.out;
  expect_no_raw_controls(r.out);
  expect_no_raw_controls(r.err);
}

TEST(TerminalOutput, UsageErrorsEscapeTheArgumentsTheyQuote) {
  auto r = run_gpuenv({"detect", "--bogus\x1b[2J\xc2\x9b"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--bogus\\x1b[2J\\u009b"), std::string::npos) << r.err;
  expect_no_raw_controls(r.err);
}

// Issue 21: explain's feedback from the last run wrote the stored
// started_at raw, where run and report escape it.
TEST(TerminalOutput, ExplainEscapesAStoredStartTime) {
  const std::string hostile = "2025\x1b]0;PWNED\x07\x1b[2J\xc2\x9b" "31m\x9b" "1m";
  std::string root = write_temp_file("x", "") + ".d", err;
  std::vector<std::string> argv = {"python3", "train.py"};
  {
    auto db = store::Store::open(root + "/gpuenv.db", &err);
    ASSERT_TRUE(db) << err;
    Job j;
    j.argv = argv;
    j.cwd = std::filesystem::current_path().string();
    j.command_fp = store::command_fingerprint(argv, j.cwd);
    j.started_at = hostile;
    j.plan_json = "{}";
    j.context.gpus.push_back({"GPU-a", "NVIDIA H200", 143771.0, 5, 16, 1980.0, 700.0});
    std::int64_t id = 0;
    ASSERT_TRUE(db->add_job(j, &id, &err)) << err;
  }
  testing::ProcessOptions o;
  o.env["GPUENV_CACHE_ROOT"] = root;
  auto r = run_gpuenv({"explain", "--", "python3", "train.py"}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Feedback from job 1 (python3 train.py, 2025\\x1b]0;PWNED"), std::string::npos) << r.out;
  expect_no_raw_controls(r.out);
  expect_no_raw_controls(r.err);
}

// Issue 35: stdout's JSON carried DEL and C1 controls raw (U+009B is CSI to a
// terminal) where stderr's JSON escaped them.
const std::string kC1 = "\xc2\x9b" "31m\x7f\xc2\x85";

void expect_no_raw_del_or_c1(const std::string& text, const std::string& what) {
  EXPECT_EQ(text.find('\x7f'), std::string::npos) << what << ": raw DEL in:\n" << text;
  for (size_t i = text.find('\xc2'); i != std::string::npos; i = text.find('\xc2', i + 1))
    EXPECT_FALSE(i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0xa0)
        << what << ": raw C1 control at " << i << " in:\n" << text;
}

TEST(TerminalOutput, JsonOnStdoutEscapesC1ControlsFromASnapshot) {
  Machine m = testing::machine::h100();
  m.gpus[0].name = "NVIDIA " + kC1 + "H100";
  std::string file = write_temp_file("machine.json", machine_to_json(m));
  expect_no_raw_del_or_c1(machine_to_json(m), "the snapshot");
  for (const char* command : {"detect", "explain"}) {
    auto r = run_gpuenv({command, "--json", "--machine", file});
    ASSERT_EQ(r.exit_code, 0) << command << ": " << r.err;
    expect_no_raw_del_or_c1(r.out, command);
    EXPECT_NE(r.out.find("\\u009b31m\\u007f\\u0085"), std::string::npos) << command << ": " << r.out;
    EXPECT_TRUE(nlohmann::json::accept(r.out)) << command;
  }
}

TEST(TerminalOutput, JsonOnStdoutEscapesC1ControlsFromNvml) {
  std::ifstream in(testing::kScenarios + "h200.txt");
  std::string scenario((std::istreambuf_iterator<char>(in)), {});
  size_t at = scenario.find("name=\"NVIDIA H200\"");
  ASSERT_NE(at, std::string::npos);
  scenario.replace(at, 18, "name=\"NVIDIA " + kC1 + "H200\"");
  testing::ProcessOptions o = testing::stand_ins("h200");
  o.env["FAKE_NVML_SCENARIO"] = write_temp_file("scenario.txt", scenario);
  auto r = run_gpuenv({"detect", "--json"}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_no_raw_del_or_c1(r.out, "detect");
  auto j = nlohmann::json::parse(r.out);
  EXPECT_NE(r.out.find("NVIDIA \\u009b31m\\u007f\\u0085H200"), std::string::npos) << r.out;
}

TEST(TerminalOutput, PlanMemoryJsonEscapesC1ControlsInModelType) {
  std::string config = write_temp_file(
      "config.json", "{\"model_type\": \"my" + kC1 + "llama\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
                     "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 1000}");
  auto r = run_gpuenv({"plan-memory", "--json", "--machine", (test_paths::tests_dir() + "/machines/h200.json"), "--config",
                       config, "--seq", "8", "--batch", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_no_raw_del_or_c1(r.out, "plan-memory");
  expect_no_raw_del_or_c1(r.err, "plan-memory's stderr");
  EXPECT_EQ(nlohmann::json::parse(r.out)["model"]["arch"], "my" + kC1 + "llama") << r.out;
}

// Issue 35: init's error text went to stderr raw (a newline, ESC, C1 CSI):
// a command that cannot start, and (as root) a GPUENV_USER that names nobody.
void expect_init_error_escaped(const std::string& format, const std::string& command, const std::string& user,
                               const std::string& said) {
  std::string dir = testing::make_temp_dir("gpuenv-init-esc");
  testing::ProcessOptions o;
  if (!user.empty()) o.env["GPUENV_USER"] = user;
  auto r = run_gpuenv({"init", "--log-format", format, "--etc-dir", dir + "/e", "--profile-d", dir + "/p", "--",
                       command}, o);
  EXPECT_NE(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find(said), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("a\nb"), std::string::npos) << r.err;
  expect_no_raw_controls(r.err);
  expect_no_raw_del_or_c1(r.err, format);
}

TEST(TerminalOutput, InitErrorsAreEscapedInBothLogFormats) {
  const std::string hostile = "a\nb\x1b[31m\xc2\x9b\x7f";
  for (const char* format : {"text", "json"}) {
    expect_init_error_escaped(format, hostile, "", "cannot run a");
    if (geteuid() == 0) expect_init_error_escaped(format, "true", hostile, "GPUENV_USER");  // read by root only
  }
}
}  // namespace
}  // namespace gpuenv
