// gpuenv labels and doctor --exit-codes nagios end to end: the real binary
// over the stand-in NVML (tests/fake_nvml/scenarios), as a node agent runs it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "builders.h"
#include "container_support.h"
#include "decide/node_labels.h"
#include "model/snapshot.h"
#include "process.h"
#include "wait_until.h"
#include "test_paths.h"
#include "text_files.h"

namespace gpuenv::testing {
namespace {

namespace stdfs = std::filesystem;



using testing::slurp;

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : stdfs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::map<std::string, std::string> parse_labels(const std::string& file) {
  std::map<std::string, std::string> out;
  std::istringstream in(file);
  const std::regex line(R"(gpuenv\.dev/([a-z0-9][-a-z0-9.]*)=(.*))");
  for (std::string l; std::getline(in, l);) {
    if (l.rfind("#", 0) == 0) continue;
    std::smatch m;
    EXPECT_TRUE(std::regex_match(l, m, line)) << l;
    if (m.size() == 3) out[m[1]] = m[2];
  }
  return out;
}

// The expiry directive, checked to lie `seconds` ahead (give or take the run).
void expect_expiry_ahead(const std::string& file, int seconds) {
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      file, m, std::regex(R"(\n# \+expiry-time=(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\n)")))
      << file;
  std::tm tm{};
  strptime(m[1].str().c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  long ahead = long(timegm(&tm) - std::time(nullptr));
  EXPECT_GE(ahead, seconds - 30) << m[1];
  EXPECT_LE(ahead, seconds + 1) << m[1];
}

TEST(LabelsCli, OnceWritesTheFeatureFileAtomically) {
  ScratchDir dir;
  std::string out = dir.path() + "/features.d/gpuenv";  // features.d is made
  ProcessResult r = run_gpuenv(
      {"labels", "--once", "--output", out, "--cache-root", dir.path() + "/cache"},
      stand_ins("h200"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(entries(dir.path() + "/features.d"), std::vector<std::string>{"gpuenv"});
  struct stat st{};
  ASSERT_EQ(stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  std::string file = slurp(out);
  EXPECT_LT(file.size(), kFeatureFileLimit);
  expect_expiry_ahead(file, 180);
  auto labels = parse_labels(file);
  for (const auto& [name, value] : labels) EXPECT_TRUE(valid_label_value(value)) << name;
  std::map<std::string, std::string> want = {
      {"gpu.count", "1"},          {"gpu.product", "NVIDIA-H200"},  {"gpu.memory", "143771"},
      {"gpu.compute.major", "9"},  {"gpu.compute.minor", "0"},      {"gpu.family", "hopper"},
      {"mig.capable", "true"},     {"mig.strategy", "none"},        {"tf32", "true"},
      {"bf16", "true"},            {"fp8", "true"},                 {"fp4", "false"},
      {"torch.wheel", "2.14.0-cu130"}, {"torch.wheel.as-of", "2026-09-18"},
      // GFD's meanings: the driver's version (580.95.05) and the CUDA version (13.0).
      {"cuda.driver.major", "580"}, {"cuda.driver.minor", "95"},   {"cuda.driver.rev", "05"},
      {"cuda.runtime.major", "13"}, {"cuda.runtime.minor", "0"},   {"driver.major", "580"}};
  for (const auto& [name, value] : want) EXPECT_EQ(labels[name], value) << name;
  EXPECT_TRUE(std::regex_match(labels["doctor"], std::regex("ok|warning|error"))) << file;
}

// GFD's 'single' strategy: the gpu.* labels describe the MIG devices.
TEST(LabelsCli, AnA100InMigModeIsLabelledAsGfdsSingleStrategy) {
  ScratchDir dir;
  ProcessResult r = run_gpuenv({"labels", "--once", "--output", "-", "--cache-root", dir.path() + "/cache"},
                               stand_ins("a100_mig"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto labels = parse_labels(r.out);
  EXPECT_EQ(labels["mig.strategy"], "single") << r.out;
  EXPECT_EQ(labels["gpu.product"], "NVIDIA-A100-SXM4-80GB-MIG-2g.20gb") << r.out;
  EXPECT_EQ(labels["gpu.count"], "3") << r.out;
  EXPECT_EQ(labels["gpu.memory"], "19968") << r.out;  // one MIG device's MiB
  EXPECT_EQ(labels["cuda.driver.major"], "570") << r.out;
  EXPECT_EQ(labels["cuda.runtime.major"], "12") << r.out;
  EXPECT_EQ(labels["cuda.runtime.minor"], "8") << r.out;
}

TEST(LabelsCli, NoGpuGivesAValidFileWithCountZero) {
  ProcessResult r = run_gpuenv({"labels", "--once", "--output", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto labels = parse_labels(r.out);
  EXPECT_EQ(labels["gpu.count"], "0") << r.out;
  EXPECT_EQ(labels["doctor"], "error") << r.out;
  EXPECT_FALSE(labels.count("gpu.product")) << r.out;
  expect_expiry_ahead(r.out, 180);
}

// A driver/library mismatch (NVML 18): the GPUs are there but unreadable,
// so no GPU label is published rather than gpu.count=0 (issue 37).
TEST(LabelsCli, UnreadableGpusGiveNoGpuLabels) {
  ProcessResult r = run_gpuenv({"labels", "--once", "--output", "-"}, stand_ins("init_version_mismatch"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto labels = parse_labels(r.out);
  EXPECT_FALSE(labels.count("gpu.count")) << r.out;
  EXPECT_FALSE(labels.count("driver.major")) << r.out;
  EXPECT_EQ(labels["doctor"], "error") << r.out;
  expect_expiry_ahead(r.out, 180);
}

TEST(LabelsCli, IntervalSetsTheExpiryAndBadInputExits3) {
  ProcessResult r = run_gpuenv({"labels", "--once", "--interval", "600", "--output", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_expiry_ahead(r.out, 1800);
  EXPECT_EQ(run_gpuenv({"labels", "--once", "--machine", "/nonexistent.json"}).exit_code, 3);
  EXPECT_EQ(run_gpuenv({"labels", "--interval", "0"}).exit_code, 2);
}

TEST(LabelsCli, AnUnwritableOutputExits1) {
  ProcessResult r = run_gpuenv({"labels", "--once", "--output", "/proc/gpuenv-x/features"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("gpuenv: labels: mkdir(/proc/gpuenv-x)"), std::string::npos) << r.err;
}

ino_t inode_of(const std::string& path) {
  struct stat st{};
  return stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

// Without --once: a new file (a rename: a new inode) every round, and
// SIGTERM ends the loop with status 0, leaving no temporary file.
TEST(LabelsCli, LoopRewritesEachRoundUntilSigterm) {
  ScratchDir dir;
  std::string out = dir.path() + "/gpuenv";
  Background b({test_paths::gpuenv_bin(), "labels", "--interval", "1", "--output", out, "--cache-root",
                dir.path() + "/cache"},
               stand_in_env("h200"));
  ASSERT_TRUE(wait_until([&] { return inode_of(out) != 0; })) << b.log();
  ino_t first = inode_of(out);
  ASSERT_TRUE(wait_until([&] { return inode_of(out) != first && inode_of(out) != 0; }))
      << "not rewritten: " << b.log();
  EXPECT_EQ(parse_labels(slurp(out))["gpu.count"], "1");
  kill(b.pid(), SIGTERM);
  int code = -1;
  ASSERT_TRUE(b.wait_exit(10000, &code)) << "SIGTERM did not end the loop: " << b.log();
  EXPECT_EQ(code, 0) << b.log();
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"gpuenv"});
}

// As doctor_test.cc's: a snapshot doctor finds all ok, or warnings only.
std::string snapshot(bool small_shm) {
  Machine m = machine::h200(1);
  m.host.nvidia_device_nodes = {"/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidiactl"};
  m.nvidia.cuda_init_result = 0;
  Torch t;
  t.version = "2.11.0+cu130";
  t.cuda_version = "13.0";
  t.bytecode_cached = true;
  t.libtorch_cuda = CudaBinary{"/v/torch/lib/libtorch_cuda.so", "torch", {"sm_90"}, {}, {}};
  m.torch = t;
  if (small_shm) m.host.shm_bytes = 64ull << 20, m.host.container = "docker";
  return write_temp_file("machine.json", machine_to_json(m));
}

struct ExitRow {
  std::string description;
  std::string scenario;
  std::vector<std::string> extra;
  int default_code, nagios_code;
};

TEST(DoctorNagios, ExitCodesBothModes) {
  const std::vector<ExitRow> rows = {
      {"all ok", "h200", {"--machine", snapshot(false)}, 0, 0},
      {"warnings only", "h200", {"--machine", snapshot(true)}, 4, 1},
      {"stand-in H200 without device nodes: an error", "h200", {}, 1, 2},
      {"four sick H100s: errors", "h100_sick_4", {}, 1, 2},
      {"cannot judge: unknown", "h200", {"--machine", "/nonexistent/m.json"}, 3, 3},
  };
  for (const ExitRow& row : rows) {
    std::vector<std::string> args = {"doctor", "--json"};
    args.insert(args.end(), row.extra.begin(), row.extra.end());
    EXPECT_EQ(run_gpuenv(args, stand_ins(row.scenario)).exit_code, row.default_code)
        << row.description;
    args.insert(args.end(), {"--exit-codes", "nagios"});
    EXPECT_EQ(run_gpuenv(args, stand_ins(row.scenario)).exit_code, row.nagios_code)
        << row.description;
  }
  EXPECT_EQ(run_gpuenv({"doctor", "--exit-codes", "icinga"}).exit_code, 2);
}

}  // namespace
}  // namespace gpuenv::testing
