// Outside text reaching a terminal through the real binary: a hostile
// snapshot's error on stderr, and a hostile stored row in bench --history.
// Nothing may come out raw: no ESC, BEL, C1 CSI (U+009B) or lone 0x9B.
#include <gtest/gtest.h>

#include <filesystem>

#include "builders.h"
#include "model/snapshot.h"
#include "process.h"
#include "store/fingerprint.h"
#include "store/store.h"

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

}  // namespace
}  // namespace gpuenv
