// End to end: the real gpuenv binary, its exit codes and its output.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "builders.h"
#include "model/snapshot.h"
#include "process.h"
#include "test_paths.h"
#include "text_files.h"

namespace gpuenv {
namespace {

using testing::run_gpuenv;
using testing::run_process;
using testing::write_temp_file;

std::string snapshot(const Machine& m) { return write_temp_file("machine.json", machine_to_json(m)); }

using testing::contains;

TEST(Cli, VersionAndHelp) {
  auto r = run_gpuenv({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(contains(r.out, "gpuenv 0.1.0")) << r.out;
  for (const char* sub : {"detect", "env", "explain", "run"}) {
    auto h = run_gpuenv({sub, "--help"});
    EXPECT_EQ(h.exit_code, 0) << sub;
    EXPECT_TRUE(contains(h.out, "--machine")) << sub << ": " << h.out;
  }
  // Only the named subcommand's options are built; the list has them all.
  auto all = run_gpuenv({"--help"});
  EXPECT_EQ(all.exit_code, 0);
  for (const char* sub :
       {"detect", "env", "explain", "run", "init", "serve", "doctor", "inspect", "bench", "check"})
    EXPECT_TRUE(contains(all.out, std::string("  ") + sub + " ")) << sub << ": " << all.out;
}

// explain fits $COLUMNS, in a pipe too (issue 37): on the dgx-a100
// snapshot at 80 columns the table stays within them and shortens long
// values; --wide prints what a pipe without $COLUMNS gets, every value whole.
TEST(Cli, ExplainFitsColumnsAndWideShowsValuesWhole) {
  std::string dgx = (test_paths::tests_dir() + "/machines/a100x8-nvlink.json");
  testing::ProcessOptions narrow;
  narrow.env = {{"COLUMNS", "80"}};
  auto r = run_gpuenv({"explain", "--machine", dgx}, narrow);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream in(r.out.substr(0, r.out.find("\n\n")));
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    std::size_t width = 0;
    for (unsigned char c : line) width += (c & 0xC0) != 0x80;
    bool one_word = line.rfind(' ', 0) == 0 && line.find(' ', line.find_first_not_of(' ')) == std::string::npos;
    if (!one_word) {  // a word longer than WHY's column stays whole
      EXPECT_LE(width, 80u) << line;
    }
  }
  EXPECT_GT(lines, 14) << r.out;
  EXPECT_LE(r.out.find("WHY"), 80u - 24) << r.out;  // WHY keeps room: VALUE is not PYTHONPATH's width
  testing::ProcessOptions no_columns;
  no_columns.env = {{"COLUMNS", ""}};
  auto whole = run_gpuenv({"explain", "--machine", dgx}, no_columns);
  auto wide = run_gpuenv({"explain", "--wide", "--machine", dgx}, narrow);
  EXPECT_EQ(wide.out, whole.out);
  EXPECT_EQ(whole.out.find("\u2026"), std::string::npos) << whole.out;
}

// A bare gpuenv and `gpuenv help` print the overview; `gpuenv help CMD`
// is `gpuenv CMD --help` (issue 37).
TEST(Cli, HelpAndABareGpuenvPrintTheOverview) {
  auto bare = run_gpuenv({});
  EXPECT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_EQ(bare.out, run_gpuenv({"--help"}).out);
  EXPECT_TRUE(contains(bare.out, "  detect ")) << bare.out;
  auto help = run_gpuenv({"help"});
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_EQ(help.out, bare.out);
  for (std::vector<std::string> topic : {std::vector<std::string>{"detect"}, {"plan-memory"}, {"serve", "jupyter"}}) {
    std::vector<std::string> args = {"help"};
    args.insert(args.end(), topic.begin(), topic.end());
    auto h = run_gpuenv(args);
    topic.push_back("--help");
    auto want = run_gpuenv(topic);
    EXPECT_EQ(h.exit_code, 0) << h.err;
    EXPECT_EQ(h.out, want.out) << topic[0];
  }
  auto typo = run_gpuenv({"help", "detec"});
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_TRUE(contains(typo.err, "did you mean \"detect\"?")) << typo.err;
}

// A misspelt command or flag gets the nearest one, and a pointer to help.
TEST(Cli, SuggestsTheNearestCommandOrFlag) {
  auto cmd = run_gpuenv({"detec"});
  EXPECT_EQ(cmd.exit_code, 2);
  EXPECT_TRUE(contains(cmd.err, "unknown command \"detec\"; did you mean \"detect\"? (gpuenv help lists every command)"))
      << cmd.err;
  EXPECT_FALSE(contains(cmd.err, "the commands are")) << cmd.err;
  auto swapped = run_gpuenv({"lables"});
  EXPECT_TRUE(contains(swapped.err, "did you mean \"labels\"?")) << swapped.err;
  auto flag = run_gpuenv({"detect", "--jsn"});
  EXPECT_EQ(flag.exit_code, 2);
  EXPECT_TRUE(contains(flag.err, "gpuenv: detect does not take --jsn; did you mean --json? (gpuenv help detect lists its flags)"))
      << flag.err;
  auto nested = run_gpuenv({"serve", "jupyter", "--prot", "1"});
  EXPECT_EQ(nested.exit_code, 2);
  EXPECT_TRUE(contains(nested.err, "gpuenv: serve jupyter does not take --prot; did you mean --port?")) << nested.err;
  auto far = run_gpuenv({"detect", "--frobnicate"});
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_TRUE(contains(far.err, "gpuenv: detect does not take --frobnicate (gpuenv help detect")) << far.err;
  auto json = run_gpuenv({"detect", "--log-format", "json", "--jsn"});
  EXPECT_TRUE(contains(json.err, "\"suggestion\":\"--json\"")) << json.err;
}

TEST(Cli, UsageErrorsExit2) {
  auto unknown = run_gpuenv({"frobnicate", "--json"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_TRUE(contains(unknown.err, "unknown command \"frobnicate\"; the commands are detect, env,"))
      << unknown.err;
  // A word after an option CLI11 must judge is not taken for a command.
  auto misplaced = run_gpuenv({"--machine", "m.json", "detect"});
  EXPECT_EQ(misplaced.exit_code, 2);
  EXPECT_FALSE(contains(misplaced.err, "unknown command")) << misplaced.err;
  EXPECT_EQ(run_gpuenv({"detect", "--bogus"}).exit_code, 2);
  auto r = run_gpuenv({"env", "--format", "bash"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "--format bash: expected sh, dotenv or json")) << r.err;
  auto run = run_gpuenv({"run"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(contains(run.err, "no command given")) << run.err;
}

TEST(Cli, MissingSnapshotExit3NamesTheFile) {
  auto r = run_gpuenv({"explain", "--machine", "/nonexistent/m.json"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(contains(r.err, "cannot read the snapshot: open(/nonexistent/m.json): No such file or directory")) << r.err;
}

TEST(Cli, InvalidSnapshotExit3NamesTheField) {
  std::string bad = write_temp_file("bad.json", R"({"schema_version": 1, "gpus": [{"index": 0, "compute_capability": 9}]})");
  auto r = run_gpuenv({"env", "--machine", bad});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(contains(r.err, "gpus[0].compute_capability: expected a string")) << r.err;
  std::string garbage = write_temp_file("garbage.json", "{not json");
  EXPECT_EQ(run_gpuenv({"detect", "--machine", garbage}).exit_code, 3);
}

TEST(Cli, DetectWithoutNvidiaSoftwareAnswers) {
  auto r = run_gpuenv({"detect"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "No NVIDIA GPU found")) << r.out;
  EXPECT_TRUE(contains(r.err, "/nonexistent/libnvidia-ml.so.1")) << r.err;  // problems: stderr
  auto j = run_gpuenv({"detect", "--json"});
  EXPECT_EQ(j.exit_code, 0);
  Machine m;
  std::string err;
  ASSERT_TRUE(machine_from_json(j.out, &m, &err)) << err;
  EXPECT_TRUE(m.gpus.empty());
  EXPECT_FALSE(m.nvidia.problems.empty());
}

TEST(Cli, DetectJsonRoundTripsThroughMachineFlag) {
  std::string file = snapshot(testing::machine::a100_nvlink_8());
  auto r = run_gpuenv({"detect", "--json", "--machine", file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Machine back;
  std::string err;
  ASSERT_TRUE(machine_from_json(r.out, &back, &err)) << err;
  EXPECT_EQ(back, testing::machine::a100_nvlink_8().build());
}

TEST(Cli, ExplainFromSnapshot) {
  auto r = run_gpuenv({"explain", "--machine", snapshot(testing::machine::h200())});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE")) << r.out;
  EXPECT_TRUE(contains(r.out, "TORCH_CUDA_ARCH_LIST")) << r.out;
  auto j = run_gpuenv({"explain", "--json", "--machine", snapshot(testing::machine::h200())});
  EXPECT_TRUE(contains(j.out, "\"name\": \"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE\"")) << j.out;
}

// A kept value says whose it is: the snapshot's record, or the environment
// gpuenv was started in, which wins over the record.
TEST(Cli, ExplainSaysWhoseValueItKept) {
  std::string file =
      snapshot(testing::machine::h200().env("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "0"));
  auto recorded = run_gpuenv({"explain", "--machine", file});
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  EXPECT_TRUE(contains(recorded.out, "kept the snapshot's; gpuenv would set 1")) << recorded.out;
  testing::ProcessOptions live;
  live.env["TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"] = "0";
  auto yours = run_gpuenv({"explain", "--machine", file}, live);
  ASSERT_EQ(yours.exit_code, 0) << yours.err;
  EXPECT_TRUE(contains(yours.out, "kept yours; gpuenv would set 1")) << yours.out;
  EXPECT_FALSE(contains(yours.out, "snapshot's")) << yours.out;
}

TEST(Cli, EnvShIsSafeToEvalWithHostilePaths) {
  std::string root = "/tmp/it's a $HOME `id` $(id)\nnext";
  auto r = run_gpuenv({"env", "--machine", snapshot(testing::machine::h100()), "--cache-root", root});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto sh = run_process({"sh", "-c", "eval \"$1\" && printf '%s' \"$TRITON_CACHE_DIR\"", "sh", r.out});
  ASSERT_EQ(sh.exit_code, 0) << sh.err;
  EXPECT_EQ(sh.out.rfind(root + "/triton/", 0), 0u) << sh.out;
}

// A value dotenv cannot carry leaves out that variable only, with a warning
// naming it, as init does for /etc/gpuenv/env.
TEST(Cli, EnvDotenvSkipsOnlyWhatDockerCannotRead) {
  auto r = run_gpuenv({"env", "--format", "dotenv", "--machine", snapshot(testing::machine::h100()),
                       "--cache-root", "/tmp/a\nb"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* name : {"CUDA_CACHE_PATH", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR"}) {
    EXPECT_TRUE(contains(r.err, std::string("gpuenv: warning: ") + name + " left out")) << r.err;
    EXPECT_FALSE(contains(r.out, name)) << r.out;
  }
  EXPECT_TRUE(contains(r.out, "\nTORCH_CUDA_ARCH_LIST=9.0\n")) << r.out;
  EXPECT_EQ(r.out.rfind("# For dotenv readers only", 0), 0u) << r.out;
}

TEST(Cli, UserSettingIsKeptUnlessOverride) {
  std::string file = snapshot(testing::machine::h100());
  testing::ProcessOptions o;
  o.env["TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"] = "0";
  auto kept = run_gpuenv({"env", "--format", "json", "--machine", file}, o);
  EXPECT_TRUE(contains(kept.out, "\"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE\": \"0\"")) << kept.out;
  auto over = run_gpuenv({"env", "--format", "json", "--override", "--machine", file}, o);
  EXPECT_TRUE(contains(over.out, "\"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE\": \"1\"")) << over.out;
}

TEST(Cli, RunPassesExitCodeStdinAndEnvironment) {
  std::string file = snapshot(testing::machine::h200());
  EXPECT_EQ(run_gpuenv({"run", "--machine", file, "--", "sh", "-c", "exit 7"}).exit_code, 7);
  testing::ProcessOptions o;
  o.stdin_data = "hello through stdin";
  auto cat = run_gpuenv({"run", "--machine", file, "cat"}, o);
  EXPECT_EQ(cat.out, "hello through stdin");
  auto env = run_gpuenv({"run", "--machine", file, "--", "sh", "-c", "printf %s \"$TORCH_ALLOW_TF32_CUBLAS_OVERRIDE\""});
  EXPECT_EQ(env.out, "1");
}

// Each run names its job for the exporter (GPUENV_JOB_ID, docs/metrics.md "Jobs"); an outer
// run's id is kept, and torchrun's workers get none (their tree's root makes them one job).
TEST(Cli, RunNamesItsJobForTheExporter) {
  std::string file = snapshot(testing::machine::h200());
  const std::vector<std::string> print = {"run", "--machine", file, "--", "sh", "-c", "printf %s \"$GPUENV_JOB_ID\""};
  std::string id = run_gpuenv(print).out;
  EXPECT_TRUE(std::regex_match(id, std::regex("run-[0-9]{10,}-[0-9]+"))) << id;
  EXPECT_NE(run_gpuenv(print).out, id) << "each run its own";
  testing::ProcessOptions outer;
  outer.env["GPUENV_JOB_ID"] = "run-1-2";
  EXPECT_EQ(run_gpuenv(print, outer).out, "run-1-2");
  testing::ProcessOptions worker;
  worker.env["TORCHELASTIC_RUN_ID"] = "none";
  EXPECT_EQ(run_gpuenv(print, worker).out, "");
}

TEST(Cli, RunGivesTheCommandEveryArgumentVerbatim) {
  std::string file = snapshot(testing::machine::h200());
  const std::string print = "printf '%s|' \"$@\"";
  struct Row {
    std::vector<std::string> args;
    std::string expected;
  } rows[] = {
      {{"run", "--machine", file, "--", "sh", "-c", print, "sh", "--label", "x", "--", "y"}, "--label|x|--|y|"},
      {{"run", "--machine", file, "sh", "-c", print, "sh", "--machine", "z"}, "--machine|z|"},
      {{"run", "--ptx", "--machine=" + file, "sh", "-c", print, "sh", "--", "--"}, "--|--|"},
      {{"run", "--machine", file, "--ptx", "--", "sh", "-c", print, "sh", "-h"}, "-h|"},
  };
  for (const auto& row : rows) {
    auto r = run_gpuenv(row.args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, row.expected);
  }
}

TEST(Cli, RunReportsCommandsThatCannotStart) {
  std::string file = snapshot(testing::machine::h200());
  auto r = run_gpuenv({"run", "--machine", file, "--", "/nonexistent/cmd"});
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_TRUE(contains(r.err, "cannot run /nonexistent/cmd")) << r.err;
  EXPECT_EQ(run_gpuenv({"run", "--machine", file, "--", "/etc/passwd"}).exit_code, 126);
}

// Watching (the default), run stays the parent and passes a signal's end on
// as 128+N, as a shell does; --no-watch replaces run by the command.
TEST(Cli, RunPassesTheCommandsEndOn) {
  std::string file = snapshot(testing::machine::h200());
  testing::ProcessOptions o;
  o.env["GPUENV_CACHE_ROOT"] = testing::write_temp_file("x", "") + ".d";
  o.env["GPUENV_WATCH"] = "1";
  auto r = run_gpuenv({"run", "--machine", file, "--", "sh", "-c", "kill -TERM $$"}, o);
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << r.err;
  r = run_gpuenv({"run", "--no-watch", "--machine", file, "--", "sh", "-c", "kill -TERM $$"}, o);
  EXPECT_EQ(r.term_signal, SIGTERM);
}

TEST(Cli, RunUnderTorchrunPinsEachRankToItsGpusCpus) {
  // Two GPUs sharing CPUs 0-1 of this 2-CPU machine: rank 1 gets CPU 1.
  Machine m = testing::MachineBuilder().cpus(1, 2).gpus(testing::models::h100(), 2);
  std::string file = snapshot(m);
  testing::ProcessOptions o;
  o.env["LOCAL_RANK"] = "1";
  o.env["LOCAL_WORLD_SIZE"] = "2";
  auto r = run_gpuenv({"run", "--machine", file, "--", "sh", "-c",
                       "grep Cpus_allowed_list /proc/self/status; echo OMP=$OMP_NUM_THREADS"}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "Cpus_allowed_list:\t1\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "OMP=1")) << r.out;
}

TEST(Cli, RunUnderSlurmPinsEachTaskAndExplainNamesSlurm) {
  // An srun step's task 1 of 2, two GPUs sharing CPUs 0-1: task 1 gets CPU 1.
  Machine m = testing::MachineBuilder().cpus(1, 2).gpus(testing::models::h100(), 2);
  std::string file = snapshot(m);
  testing::ProcessOptions o;
  o.env = {{"SLURM_PROCID", "1"}, {"SLURM_LOCALID", "1"}, {"SLURM_NTASKS", "2"}, {"SLURM_STEP_ID", "0"},
           {"SLURM_STEP_TASKS_PER_NODE", "2"}, {"SLURM_NODEID", "0"}};
  auto r = run_gpuenv({"run", "--machine", file, "--", "sh", "-c", "grep Cpus_allowed_list /proc/self/status"}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "Cpus_allowed_list:\t1\n")) << r.out;
  auto text = run_gpuenv({"explain", "--machine", file}, o);
  EXPECT_TRUE(contains(text.out, "\nlauncher: Slurm (SLURM_PROCID=1, SLURM_LOCALID=1, SLURM_NTASKS=2)\n")) << text.out;
  auto json = nlohmann::json::parse(run_gpuenv({"explain", "--json", "--machine", file}, o).out);
  EXPECT_EQ(json["launcher"]["engine"], "slurm");
  EXPECT_EQ(json["launcher"]["local_rank"], 1);
  EXPECT_EQ(json["launcher"]["local_world_size"], 2);
  EXPECT_EQ(json["cpu_binding"]["cpus"], nlohmann::json::array({1}));
  // Without a launcher, "launcher" is null and explain prints no such line.
  auto none = run_gpuenv({"explain", "--json", "--machine", file});
  EXPECT_TRUE(nlohmann::json::parse(none.out)["launcher"].is_null()) << none.out;
}

// A binding this machine cannot take (a snapshot's CPUs 256-511) is said on
// stderr before the command starts, watched or not, and the command runs.
TEST(Cli, RunSaysWhenTheCpuBindingFails) {
  Machine m = testing::MachineBuilder().cpus(1, 512).gpus(testing::models::h100(), 2);
  std::string file = snapshot(m);
  for (const char* watch : {"--no-watch", "--watch-off-by-env"}) {
    testing::ProcessOptions o;
    o.env = {{"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "2"}, {"WORLD_SIZE", "2"}};
    std::vector<std::string> args = {"run", "--machine", file};
    if (std::string(watch) == "--no-watch") args.push_back(watch);
    else o.env["GPUENV_WATCH"] = "1";
    o.env["GPUENV_CACHE_ROOT"] = testing::make_temp_dir("cli-binding");  // the job's record stays out of $HOME
    for (const char* a : {"--", "echo", "ran"}) args.push_back(a);
    auto r = run_gpuenv(args, o);
    EXPECT_EQ(r.exit_code, 0) << watch << ": " << r.err;
    EXPECT_EQ(r.out, "ran\n") << watch;
    EXPECT_TRUE(contains(r.err, "gpuenv: warning: ")) << watch << ": " << r.err;
    EXPECT_TRUE(contains(r.err, "sched_setaffinity")) << watch << ": " << r.err;
  }
}

TEST(Cli, ColourOnlyOnATerminalAndNeverWithNoColor) {
  std::string file = snapshot(testing::machine::h100());
  std::string cmd = test_paths::gpuenv_bin() + " explain --machine " + file;
  // script(1) gives the command a pseudo-terminal.
  testing::ProcessOptions tty;
  tty.env["NO_COLOR"] = "";
  tty.env["TERM"] = "xterm";
  auto coloured = run_process({"script", "-qec", cmd, "/dev/null"}, tty);
  EXPECT_NE(coloured.out.find("\x1b[1m"), std::string::npos) << coloured.out;
  tty.env["NO_COLOR"] = "1";
  auto plain = run_process({"script", "-qec", cmd, "/dev/null"}, tty);
  EXPECT_EQ(plain.out.find('\x1b'), std::string::npos) << plain.out;
  auto piped = run_gpuenv({"explain", "--machine", file});
  EXPECT_EQ(piped.out.find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace gpuenv

namespace gpuenv::testing {
namespace {

// detect's summary, env and explain leave NVML's slow queries that no rule
// needs out (PCIe link, max clocks, modes, power limit, NVLink links); the
// JSON snapshot and doctor read them.
TEST(Cli, OnlyTheSnapshotAndDoctorReadTheDetails) {
  std::string trace = write_temp_file("nvml.trace", "");
  ProcessOptions o;
  o.env["GPUENV_NVML_LIBRARY"] = (test_paths::fake_dir() + "/libnvidia-ml.so.1");
  o.env["FAKE_NVML_SCENARIO"] = (test_paths::tests_dir() + "/fake_nvml/scenarios/h200.txt");
  o.env["FAKE_NVML_TRACE"] = trace;
  auto calls = [&](const std::vector<std::string>& args) {
    std::ofstream(trace, std::ios::trunc).flush();
    ProcessResult r = run_gpuenv(args, o);
    if (args[0] != "doctor") {
      EXPECT_EQ(r.exit_code, 0) << r.err;
    }
    std::ifstream in(trace);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  for (auto args : std::vector<std::vector<std::string>>{{"detect"}, {"env"}, {"explain"}}) {
    std::string t = calls(args);
    EXPECT_EQ(t.find("nvmlDeviceGetMaxClockInfo"), std::string::npos) << args[0];
    EXPECT_EQ(t.find("PcieLink"), std::string::npos) << args[0];
    EXPECT_EQ(t.find("nvmlDeviceGetPowerManagementLimit"), std::string::npos) << args[0];
    EXPECT_EQ(t.find("nvmlDeviceGetNvLinkState"), std::string::npos) << args[0];
    EXPECT_EQ(t.find("nvmlDeviceGetPersistenceMode"), std::string::npos) << args[0];
  }
  std::string t = calls({"detect", "--json"});
  EXPECT_NE(t.find("nvmlDeviceGetMaxClockInfo"), std::string::npos);
  EXPECT_NE(t.find("nvmlDeviceGetCurrPcieLinkGeneration"), std::string::npos);
  EXPECT_NE(t.find("nvmlDeviceGetPowerManagementLimit"), std::string::npos);
  t = calls({"doctor"});
  EXPECT_NE(t.find("nvmlDeviceGetMaxPcieLinkWidth"), std::string::npos);
}

}  // namespace
}  // namespace gpuenv::testing

// --- issue 12: files that are not what they say, limits, and exec failures ---

namespace gpuenv::testing {
namespace {

using testing::contains;

// A FIFO with no writer: opening it to read blocks until one comes.
std::string fifo_at(const std::string& path) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  EXPECT_EQ(mkfifo(path.c_str(), 0600), 0) << path;
  return path;
}

std::string temp_dir() { return std::filesystem::path(write_temp_file("x", "")).parent_path(); }

// Ran to its end, neither killed at the timeout nor by a signal.
void expect_finished(const ProcessResult& r, const std::string& what) {
  EXPECT_NE(r.exit_code, -1) << what << " hung (killed at the timeout)";
  EXPECT_EQ(r.term_signal, 0) << what;
}

ProcessOptions quick(std::map<std::string, std::string> env = {}) {
  ProcessOptions o;
  o.env = std::move(env);
  o.timeout_ms = 10000;
  return o;
}

TEST(Cli, InspectAndMachineRefuseAFifoWithoutHanging) {
  std::string fifo = fifo_at(temp_dir() + "/lib.so");
  auto r = run_gpuenv({"inspect", fifo, "--machine", (test_paths::tests_dir() + "/machines/h200.json")}, quick());
  expect_finished(r, "inspect FIFO");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(contains(r.err, fifo + ": not a regular file (a FIFO)")) << r.err;
  std::string snap = fifo_at(temp_dir() + "/machine.json");
  for (const char* cmd : {"env", "explain", "detect"}) {
    auto m = run_gpuenv({cmd, "--machine", snap}, quick());
    expect_finished(m, std::string(cmd) + " --machine FIFO");
    EXPECT_EQ(m.exit_code, 3) << cmd;
    EXPECT_TRUE(contains(m.err, "cannot read the snapshot: " + snap + ": not a regular file (a FIFO)"))
        << cmd << ": " << m.err;
  }
}

// A venv whose torch files are FIFOs: every command that senses torch
// answers (the file is reported, not waited on).
class FifoVenv {
 public:
  FifoVenv() : venv_(temp_dir() + "/venv") {
    std::filesystem::create_directories(site() + "/torch/lib");
    std::ofstream(venv_ + "/pyvenv.cfg") << "home = /usr/bin\n";
  }
  std::string site() const { return venv_ + "/lib/python3.11/site-packages"; }
  std::string path(const std::string& rel) const { return venv_ + "/" + rel; }
  void version_py() {
    std::ofstream(site() + "/torch/version.py") << "__version__ = '2.9.0+cu128'\ncuda = '12.8'\n";
  }
  ProcessOptions env() const { return quick({{"VIRTUAL_ENV", venv_}}); }

 private:
  std::string venv_;
};

TEST(Cli, TorchFilesThatAreFifosAreReportedNotWaitedOn) {
  for (const char* which : {"pyvenv.cfg", "torch/version.py"}) {
    FifoVenv v;
    std::string rel = std::string(which) == "pyvenv.cfg" ? "pyvenv.cfg" : "lib/python3.11/site-packages/torch/version.py";
    std::filesystem::remove(v.path(rel));
    std::string fifo = fifo_at(v.path(rel));
    for (std::vector<std::string> args : {std::vector<std::string>{"env"}, {"detect"}, {"doctor"},
                                          {"run", "--", "true"}}) {
      auto r = run_gpuenv(args, v.env());
      expect_finished(r, args[0] + " with " + which + " a FIFO");
      if (args[0] != "doctor") {
        EXPECT_EQ(r.exit_code, 0) << args[0] << " " << which << ": " << r.err;
      }
    }
    auto d = run_gpuenv({"detect"}, v.env());
    EXPECT_TRUE(contains(d.err, fifo + ": not a regular file (a FIFO)")) << which << ": " << d.err;  // problems: stderr
  }
}

TEST(Cli, LibtorchCudaAsAFifoIsReportedByDoctor) {
  FifoVenv v;
  v.version_py();
  std::string fifo = fifo_at(v.site() + "/torch/lib/libtorch_cuda.so");
  auto r = run_gpuenv({"doctor"}, v.env());
  expect_finished(r, "doctor with libtorch_cuda.so a FIFO");
  EXPECT_TRUE(contains(r.out + r.err, fifo + ": not a regular file (a FIFO)")) << r.out << r.err;
}

TEST(Cli, SnapshotsOverTheLimitsOrWithARepeatedKeyExit3) {
  std::string many = R"({"schema_version": 1, "gpus": [)";
  for (int i = 0; i <= 4096; ++i) many += (i ? "," : "") + std::string(R"({"index": )") + std::to_string(i) + "}";
  auto r = run_gpuenv({"env", "--machine", write_temp_file("many.json", many + "]}")});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(contains(r.err, "gpus: 4097 GPUs, more than the 4096 a snapshot may hold")) << r.err;
  auto d = run_gpuenv({"env", "--machine",
                       write_temp_file("dup.json", R"({"schema_version": 1, "gpus": [{"index": 0, "index": 1}]})")});
  EXPECT_EQ(d.exit_code, 3);
  EXPECT_TRUE(contains(d.err, R"(gpus[0]: the key "index" is given twice)")) << d.err;
}

TEST(Cli, RunNamesAScriptsMissingInterpreter) {
  std::string dir = temp_dir(), script = dir + "/train.py";
  std::ofstream(script) << "#!/nonexistent/python -u\nprint('hi')\n";
  chmod(script.c_str(), 0755);
  std::string file = write_temp_file("machine.json", machine_to_json(machine::h200()));
  const std::string says = "its interpreter /nonexistent/python (the #! line of ";
  auto r = run_gpuenv({"run", "--machine", file, "--", script});
  EXPECT_EQ(r.exit_code, 126);
  EXPECT_TRUE(contains(r.err, "cannot run " + script + ": " + says + script + ") is missing")) << r.err;
  EXPECT_FALSE(contains(r.err, "not found on PATH")) << r.err;
  ProcessOptions on_path;  // found on $PATH by name
  on_path.env["PATH"] = dir + ":/usr/bin:/bin";
  auto p = run_gpuenv({"run", "--machine", file, "--", "train.py"}, on_path);
  EXPECT_EQ(p.exit_code, 126);
  EXPECT_TRUE(contains(p.err, says + script + ") is missing")) << p.err;
  auto missing = run_gpuenv({"run", "--machine", file, "--", "no-such-command-gpuenv"});
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_TRUE(contains(missing.err, "(not found on PATH)")) << missing.err;
}

}  // namespace
}  // namespace gpuenv::testing
