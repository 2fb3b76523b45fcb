// gpuenv run watching a job against the stand-in NVML, gpuenv report, the
// next run's verdict line and --tune's hook (end to end).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "job_builders.h"
#include "nvml_trace_job.h"
#include "process.h"
#include "report_json.h"
#include "wait_until.h"
#include "store/fingerprint.h"
#include "store/store.h"
#include "test_paths.h"

namespace gpuenv::testing {
namespace {

using nlohmann::json;

std::string temp_dir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "gpuenv-watch-XXXXXX").string();
  return mkdtemp(tmpl.data());
}

ProcessOptions watched(const std::string& scenario, const std::string& root) {
  ProcessOptions o = stand_ins(scenario);
  o.env["GPUENV_WATCH_INTERVAL_MS"] = "100";
  o.env["GPUENV_CACHE_ROOT"] = root;
  o.env["GPUENV_WATCH"] = "1";
  return o;
}

std::vector<double> means(const json& job, const char* metric) {
  std::vector<double> out;
  for (const auto& p : job["timeline"]["points"])
    if (p.contains(metric)) out.push_back(p[metric][1].get<double>());
  return out;
}

double max_of(const std::vector<double>& v) { return v.empty() ? -1 : *std::max_element(v.begin(), v.end()); }

// A job that starts two workers, waits until the stand-in NVML has read the
// utilisation 7 more times (for at most 30 s), ends the workers and exits 3.
// No fork while it waits: the workers stay two.
const std::string kSevenReadings = until_nvml_calls(
    "nvmlDeviceGetUtilizationRates\\n", 7,
    "import subprocess, sys\nworkers = [subprocess.Popen(['sleep', '60']) for _ in range(2)]\n",
    "for w in workers:\n    w.kill(); w.wait()\nsys.exit(3)\n");

TEST(Watch, SamplesTheJobAndKeepsItsRecord) {
  std::string root = temp_dir();
  ProcessOptions o = watched("h200_job", root);
  // The job, with two workers, lasts until the 0.1 s sampler has read the
  // GPU's utilisation 7 times (the stand-in's trace counts them): however
  // loaded the machine, the record then has its five samples.
  o.env["FAKE_NVML_TRACE"] = root + "/nvml-trace";
  // Debian's python3 itself: a version manager's shim (pyenv's is a shell
  // script) would add its own processes to the job's workers.
  const std::vector<std::string> job_argv = {"/usr/bin/python3", "-c", kSevenReadings};
  ProcessResult r = run_gpuenv({"run", "--", job_argv[0], job_argv[1], job_argv[2]}, o);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("gpuenv: job 1: "), std::string::npos) << r.err;
  json job = report_json({"1"}, o);
  ASSERT_TRUE(job.is_object());
  EXPECT_EQ(job["exit_code"], 3);
  EXPECT_EQ(job["argv"], json(job_argv));
  EXPECT_EQ(job["cwd"], std::filesystem::current_path().string());
  EXPECT_GE(job["duration_s"].get<double>(), 0.5);  // six intervals at least
  EXPECT_EQ(job["context"]["gpus"][0]["name"], "NVIDIA H200");
  EXPECT_EQ(job["context"]["gpus"][0]["pcie_gen"], 5);
  EXPECT_EQ(job["context"]["interval_s"], 0.1);
  std::vector<double> util = means(job, "util_pct");
  ASSERT_GE(util.size(), 5u);
  for (double u : util) EXPECT_TRUE(u == 10 || u == 20 || u == 15 || u == 5) << u;  // the scenario's sequence
  EXPECT_EQ(max_of(means(job, "mem_mib")), 8192);        // job_mem of gpuenv's child, sh
  EXPECT_NEAR(max_of(means(job, "pcie_rx_mbs")), 2048, 1);  // 2,000,000 KB/s
  EXPECT_EQ(max_of(means(job, "power_w")), 180);
  EXPECT_EQ(max_of(means(job, "workers")), 2);  // the two sleeps under python3
  // NVML GPM, from the second sample on (a figure is between two samples).
  std::vector<double> sm = means(job, "sm_active_pct");
  ASSERT_GE(sm.size(), 4u);
  for (double x : sm) EXPECT_DOUBLE_EQ(x, 45);
  for (double x : means(job, "tensor_active_pct")) EXPECT_DOUBLE_EQ(x, 0);
  EXPECT_DOUBLE_EQ(max_of(means(job, "fp32_active_pct")), 70);
  EXPECT_DOUBLE_EQ(max_of(means(job, "dram_active_pct")), 30);
  EXPECT_DOUBLE_EQ(max_of(means(job, "sm_occupancy_pct")), 20);
  EXPECT_EQ(job["timeline"]["points"][0].count("sm_active_pct"), 0u);
  EXPECT_TRUE(job["verdict"]["name"].is_string());
  json list = report_json({}, o);
  ASSERT_EQ(list["jobs"].size(), 1u);
  EXPECT_EQ(list["jobs"][0]["id"], 1);
}

// A job on a MIG device (CUDA_VISIBLE_DEVICES=MIG-...) is watched there:
// the device's name, memory and processes, its GPU's power and link, and
// GPM's graphics-engine activity of the instance as its utilisation (NVML
// has none of a MIG device), never the whole GPU's figures.
TEST(Watch, AJobOnAMigDeviceIsWatchedThere) {
  std::string root = temp_dir();
  ProcessOptions o = watched("h100_mig_job", root);
  o.env["CUDA_VISIBLE_DEVICES"] = "MIG-7a1e0c1a-0d4b-5a8e-9c3f-000000000001";
  o.env["FAKE_NVML_TRACE"] = root + "/nvml-trace";
  // Until the watcher has listed the instance's processes 8 times (30 s at most).
  std::string job = until_nvml_calls("nvmlDeviceGetComputeRunningProcesses", 8);
  ProcessResult r = run_gpuenv({"run", "--", "/usr/bin/python3", "-c", job}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = report_json({"1"}, o);
  ASSERT_TRUE(j.is_object());
  const json& gpu = j["context"]["gpus"][0];
  EXPECT_EQ(gpu["uuid"], "MIG-7a1e0c1a-0d4b-5a8e-9c3f-000000000001");
  EXPECT_EQ(gpu["name"], "NVIDIA H100 80GB HBM3 MIG 3g.40gb");
  EXPECT_EQ(gpu["memory_total_mib"], 40192);  // the instance's, not the GPU's 81 559
  EXPECT_EQ(gpu["power_limit_w"], 700);       // its GPU's
  EXPECT_EQ(gpu["pcie_gen"], 5);
  std::vector<double> util = means(j, "util_pct");
  ASSERT_GE(util.size(), 3u);
  for (double u : util) EXPECT_DOUBLE_EQ(u, 97) << "GPM's GR activity of the instance, not the GPU's util=10";
  for (double x : means(j, "sm_active_pct")) EXPECT_DOUBLE_EQ(x, 92);
  EXPECT_EQ(max_of(means(j, "mem_mib")), 20480);  // job_mem on the instance
  EXPECT_EQ(max_of(means(j, "power_w")), 400);
  EXPECT_TRUE(means(j, "pcie_rx_mbs").empty()) << "the GPU's PCIe traffic is not the instance's";
  EXPECT_EQ(j["peak_memory_bytes"], 21474836480);
  EXPECT_EQ(j["verdict"]["name"], "busy") << j["verdict"];
}

TEST(Watch, ASignalEndsItAs128PlusN) {
  std::string root = temp_dir();
  ProcessOptions o = watched("h200_job", root);
  ProcessResult r = run_gpuenv({"run", "--", "sh", "-c", "kill -TERM $$"}, o);
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << r.err;
  EXPECT_EQ(report_json({"1"}, o)["exit_code"], 128 + SIGTERM);
}

// issue 21, 13: SIGALRM and SIGPIPE ended gpuenv (142, 141) and orphaned the job.
TEST(Watch, SigalrmAndSigpipeAreForwardedAndTheJobRecorded) {
  std::string root = temp_dir();
  ProcessOptions o = watched("h200_job", root);
  int id = 0;
  for (std::string sig : {"SIGALRM", "SIGPIPE"}) {
    // The job signals gpuenv. Python, not sh: a shell cannot trap a signal
    // ignored on entry, and the tests' runner ignores SIGPIPE.
    std::string script = "import os, signal, time\nsignal.signal(signal." + sig + ", lambda *a: os._exit(5))\n"
                         "os.kill(os.getppid(), signal." + sig + ")\ntime.sleep(20)";
    ProcessResult r = run_gpuenv({"run", "--", "python3", "-c", script}, o);
    EXPECT_EQ(r.exit_code, 5) << sig << ": " << r.err;
    EXPECT_NE(r.err.find("gpuenv: job " + std::to_string(++id) + ": "), std::string::npos) << r.err;
  }
}

// issue 21, 12: gpuenv waited 60 s for a store another process held, held
// SIGTERM meanwhile, and then exited 143 instead of the job's 6.
TEST(Watch, ABusyStoreNeverHoldsTheJobsExitStatus) {
  std::string root = temp_dir(), err;
  ASSERT_TRUE(store::Store::open(root + "/gpuenv.db", &err)) << err;
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open((root + "/gpuenv.db").c_str(), &holder), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  ProcessOptions o = watched("h200_job", root);
  auto start = std::chrono::steady_clock::now();
  ProcessResult r = run_gpuenv({"run", "--", "sh", "-c", "exit 6"}, o);
  EXPECT_LT(std::chrono::steady_clock::now() - start, kEventBound);  // not the 60 s it was
  EXPECT_EQ(r.exit_code, 6) << r.err;
  EXPECT_NE(r.err.find("the job's record was skipped, its exit status 6 is passed on: "), std::string::npos) << r.err;
  // A SIGTERM after the job ended, while gpuenv waits for the store (or
  // pending before it starts to: either way the wait gives up at once). One
  // signal: more could reach gpuenv as it exits, where a sanitizer's exit
  // checks run in a thread that does not block it.
  r = run_gpuenv({"run", "--", "sh", "-c",
                  "(while kill -0 $$ 2>/dev/null; do sleep 0.05; done; kill -TERM $PPID) & exit 6"}, o);
  EXPECT_EQ(r.exit_code, 6) << r.err;
  EXPECT_NE(r.err.find("record was skipped, its exit status 6 is passed on: a stop signal arrived"),
            std::string::npos) << r.err;
  sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(holder);
  EXPECT_EQ(report_json({}, o)["jobs"].size(), 0u);
}

TEST(Watch, WithoutNvmlTheJobStillRunsWithOneLine) {
  std::string root = temp_dir();
  ProcessOptions o;
  o.env["GPUENV_CACHE_ROOT"] = root;
  o.env["GPUENV_WATCH_INTERVAL_MS"] = "100";
  o.env["GPUENV_WATCH"] = "1";
  ProcessResult r = run_gpuenv({"run", "--", "sh", "-c", "sleep 0.6; echo ran"}, o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ran\n");
  std::size_t first = r.err.find("the job runs unwatched: ");
  EXPECT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("runs unwatched", first + 24), std::string::npos) << r.err;  // once
  EXPECT_EQ(report_json({"1"}, o)["verdict"]["name"], "unwatched");
}

TEST(Watch, OffWithNoWatchOrTheVariable) {
  std::string root = temp_dir();
  ProcessOptions o = watched("h200_job", root);
  EXPECT_EQ(run_gpuenv({"run", "--no-watch", "--", "true"}, o).exit_code, 0);
  EXPECT_EQ(report_json({}, o)["jobs"].size(), 0u);
  o.env["GPUENV_WATCH"] = "0";
  ProcessResult r = run_gpuenv({"run", "--", "sh", "-c", "exit 4"}, o);
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_EQ(r.err.find("job "), std::string::npos) << r.err;
  EXPECT_EQ(report_json({}, o)["jobs"].size(), 0u);
}

TEST(Watch, UnderLocalRankOnlyItsGpu) {
  std::string root = temp_dir();
  ProcessOptions o = watched("h200x2_other_gpu", root);
  o.env["LOCAL_RANK"] = "1";
  o.env["LOCAL_WORLD_SIZE"] = "2";
  o.env["RANK"] = "1";
  ASSERT_EQ(run_gpuenv({"run", "--", "sleep", "0.3"}, o).exit_code, 0);
  json job = report_json({"1"}, o);
  ASSERT_EQ(job["context"]["gpus"].size(), 1u);
  EXPECT_EQ(job["context"]["gpus"][0]["uuid"], "GPU-0d2f1c3e-8a52-4b0e-9d3a-2f1e7b9c4d11");
  EXPECT_EQ(job["rank"], 1);
  EXPECT_EQ(job["local_rank"], 1);
}

TEST(Watch, AJobOnAnotherGpuIsNamed) {
  std::string root = temp_dir();
  ProcessOptions o = watched("h200x2_other_gpu", root);
  o.env["CUDA_VISIBLE_DEVICES"] = "0";
  ASSERT_EQ(run_gpuenv({"run", "--", "sleep", "1"}, o).exit_code, 0);
  json v = report_json({"1"}, o)["verdict"];
  EXPECT_EQ(v["name"], "idle");
  EXPECT_NE(v["evidence"].get<std::string>().find("4096 MiB on a GPU it was not given"), std::string::npos) << v;
}

// issue 21, 14: one damaged row made the whole list exit 1.
TEST(Report, TheListLeavesOutADamagedRowAndSaysSo) {
  std::string root = temp_dir();
  ProcessOptions o = watched("h200_job", root);
  ASSERT_EQ(run_gpuenv({"run", "--", "true"}, o).exit_code, 0);
  ASSERT_EQ(run_gpuenv({"run", "--", "true"}, o).exit_code, 0);
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open((root + "/gpuenv.db").c_str(), &raw), SQLITE_OK);
  sqlite3_exec(raw, "UPDATE jobs SET argv = 'x' WHERE id = 1", nullptr, nullptr, nullptr);
  sqlite3_close(raw);
  ProcessResult r = run_gpuenv({"report", "--json"}, o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("left out a job that does not read: " + root + "/gpuenv.db: job 1: argv is not a JSON array"),
            std::string::npos) << r.err;
  json list = json::parse(r.out, nullptr, false);
  ASSERT_EQ(list["jobs"].size(), 1u) << r.out;
  EXPECT_EQ(list["jobs"][0]["id"], 2);
}

TEST(Report, SvgAndErrors) {
  std::string root = temp_dir();
  ProcessOptions o = watched("h200_job", root);
  ASSERT_EQ(run_gpuenv({"run", "--", "sleep", "0.5"}, o).exit_code, 0);
  std::string svg = root + "/chart.svg";
  ProcessResult r = run_gpuenv({"report", "1", "--svg", svg}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Verdict: "), std::string::npos);
  EXPECT_TRUE(std::filesystem::file_size(svg) > 1000);
  r = run_gpuenv({"report", "9"}, o);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("no job 9"), std::string::npos) << r.err;
  r = run_gpuenv({"report", "x1"}, o);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("JOB must be a job id"), std::string::npos) << r.err;
}

// A stored input-bound run of the command, as gpuenv run would have left it.
void store_input_bound(const std::string& db_path, const std::vector<std::string>& argv, double duration_s = 0) {
  std::string err;
  auto db = store::Store::open(db_path, &err);
  ASSERT_TRUE(db) << err;
  Job j = input_bound_job(argv, std::filesystem::current_path().string(), duration_s);
  std::int64_t id = 0;
  ASSERT_TRUE(db->add_job(j, &id, &err)) << err;
}

const std::string kHook = (test_paths::tests_dir() + "/tune_hook");

ProcessOptions tune_env(const std::string& root) {
  ProcessOptions o;
  o.env["GPUENV_CACHE_ROOT"] = root;
  o.env["GPUENV_PYTHON_DIR"] = test_paths::tests_dir() + "/../python";
  o.env["GPUENV_WATCH"] = "1";
  o.env["PYTHONPATH"] = kHook + ":" + kHook + "/other_site";  // the stand-in torch, another sitecustomize
  return o;
}

TEST(Tune, TheHookTunesDefaultLoadersOnly) {
  std::string root = temp_dir();
  std::vector<std::string> cmd = {"python3", kHook + "/loaders.py"};
  store_input_bound(root + "/gpuenv.db", cmd);
  std::vector<std::string> args = {"run", "--tune", "--"};
  args.insert(args.end(), cmd.begin(), cmd.end());
  ProcessResult r = run_gpuenv(args, tune_env(root));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("last run of this command (job 1, 2025-01-01T00:00:00Z): input-bound"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--tune: DataLoaders left at their defaults get num_workers=15,pin_memory=True,persistent_workers=True"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("other sitecustomize ran"), std::string::npos) << r.err;  // chained
  json got = json::parse(r.out, nullptr, false);
  ASSERT_EQ(got.size(), 10u) << r.out;
  auto is = [&](int i, int workers, bool pin, bool persistent) {
    EXPECT_EQ(got[i]["num_workers"], workers) << i;
    EXPECT_EQ(got[i]["pin_memory"], pin) << i;
    EXPECT_EQ(got[i]["persistent_workers"], persistent) << i;
  };
  is(0, 15, true, true);    // defaults: all three
  is(1, 2, true, true);     // its num_workers=2 kept
  is(2, 15, false, true);   // its pin_memory=False kept
  is(3, 0, true, false);    // its num_workers=0 kept; no persistent workers without workers
  is(4, 0, false, false);   // IterableDataset: untouched
  is(5, 0, false, false);   // CUDA tensors: untouched
  is(6, 15, true, true);    // a subclass
  EXPECT_EQ(got[6]["drop_last"], true);
  is(9, 15, true, true);
  EXPECT_EQ(got[0]["batch_size"], 4);  // nothing else changes
  std::size_t lines = 0;
  for (std::size_t at = 0; (at = r.err.find("gpuenv --tune: DataLoader at loaders.py:", at)) != std::string::npos; ++at)
    ++lines;
  EXPECT_EQ(lines, 8u) << r.err;  // one per call site
  EXPECT_NE(r.err.find("left as it is: an IterableDataset"), std::string::npos) << r.err;
}

TEST(Tune, ASettingCanBeRefused) {
  std::string root = temp_dir();
  std::vector<std::string> cmd = {"python3", kHook + "/loaders.py"};
  store_input_bound(root + "/gpuenv.db", cmd);
  ProcessOptions o = tune_env(root);
  o.env["GPUENV_TUNE_SKIP"] = "pin_memory";
  ProcessResult r = run_gpuenv({"run", "--tune=-num_workers", "--", cmd[0], cmd[1]}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json got = json::parse(r.out, nullptr, false);
  ASSERT_EQ(got.size(), 10u) << r.out;
  EXPECT_EQ(got[0]["num_workers"], 0);
  EXPECT_EQ(got[0]["pin_memory"], false);
  EXPECT_EQ(got[1]["persistent_workers"], true);  // its own 2 workers may persist
  r = run_gpuenv({"run", "--tune=-batch", "--", "true"}, o);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown setting \"-batch\""), std::string::npos) << r.err;
}

TEST(Tune, WithoutTuneOrAVerdictNothingChanges) {
  std::string root = temp_dir();
  std::vector<std::string> cmd = {"python3", kHook + "/loaders.py"};
  ProcessResult r = run_gpuenv({"run", "--tune", "--", cmd[0], cmd[1]}, tune_env(root));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("--tune: nothing to apply: this command has not run under gpuenv run before"), std::string::npos)
      << r.err;
  EXPECT_EQ(json::parse(r.out, nullptr, false)[0]["num_workers"], 0);
  store_input_bound(root + "/gpuenv.db", cmd);
  r = run_gpuenv({"run", "--", cmd[0], cmd[1]}, tune_env(root));  // no --tune: only the line
  EXPECT_NE(r.err.find("input-bound"), std::string::npos) << r.err;
  EXPECT_EQ(json::parse(r.out, nullptr, false)[0]["num_workers"], 0);
}

// issue 25: --tune=+precision sets the hook's variable only on bf16 GPUs, only when named,
// and the record says so.
TEST(Tune, PrecisionOnlyWhenAskedAndOnlyWithBf16) {
  std::string root = temp_dir();
  ProcessOptions o = tune_env(root);
  o.env["GPUENV_TUNE_PRECISION"] = "bf16";  // set from outside: not asking
  std::vector<std::string> show = {"--", "sh", "-c", "echo ${GPUENV_TUNE_PRECISION:-unset}"};
  auto run = [&](const char* machine, std::vector<std::string> args) {
    args.insert(args.begin(), {"run", "--machine", test_paths::tests_dir() + "/machines/" + machine});
    args.insert(args.end(), show.begin(), show.end());
    return run_gpuenv(args, o);
  };
  ProcessResult r = run("h200.json", {"--tune"});
  EXPECT_EQ(r.out, "unset\n") << r.err;  // a bare --tune never applies it
  r = run("v100.json", {"--tune=+precision"});
  EXPECT_EQ(r.out, "unset\n") << r.err;
  EXPECT_NE(r.err.find("--tune=+precision refused: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("loss scaling"), std::string::npos) << r.err;
  r = run("h200.json", {"--tune=+precision"});
  EXPECT_EQ(r.out, "bf16\n") << r.err;
  EXPECT_NE(r.err.find("--tune=+precision: the job's forward passes and losses run under bf16 autocast"),
            std::string::npos) << r.err;
  r = run_gpuenv({"report", "--json"}, o);
  json jobs = json::parse(r.out, nullptr, false)["jobs"];
  ASSERT_EQ(jobs.size(), 3u) << r.out;
  EXPECT_EQ(jobs[0]["context"]["precision"], "bf16") << r.out;  // the newest first
  EXPECT_EQ(jobs[1]["context"]["precision"], "") << r.out;
  EXPECT_EQ(jobs[0]["context"]["bf16"], true);
  EXPECT_EQ(jobs[1]["context"]["bf16"], false);  // the V100
}

// issue 35: under python3 -I, -E or -S, and with the user's empty PYTHONPATH that the plan keeps,
// the hook never loads: gpuenv said the job ran under bf16 autocast, and left GPUENV_TUNE_PRECISION
// for the next Python the job starts. It now says why it is not applied and sets nothing.
TEST(Tune, PrecisionIsNotClaimedWhereTheHookCannotLoad) {
  std::string root = temp_dir();
  const std::string show = "import os, sys; print('gpuenv_sitecustomize' in sys.modules, "
                           "os.environ.get('GPUENV_TUNE_PRECISION', 'unset'))";
  struct Row {
    std::vector<std::string> command;
    std::optional<std::string> pythonpath;  // the user's; nullopt: tune_env's
    std::string why;                        // "": the hook loads
  };
  std::vector<Row> rows = {
      {{"python3", "-c", show}, std::nullopt, ""},
      {{"python3", "-I", "-c", show}, std::nullopt, "python3 -I (isolated mode ignores PYTHONPATH)"},
      {{"python3", "-Ec", show}, std::nullopt, "python3 -E (it ignores the PYTHON* variables"},
      {{"python3", "-S", "-c", show}, std::nullopt, "python3 -S (it imports no site module"},
      {{"env", "A=1", "python3", "-IS", "-c", show}, std::nullopt, "python3 -I"},
      {{"python3", "-c", show}, "", "your PYTHONPATH is set empty, and gpuenv keeps it"},
  };
  for (const auto& row : rows) {
    ProcessOptions o = tune_env(root);
    if (row.pythonpath) o.env["PYTHONPATH"] = *row.pythonpath;
    std::vector<std::string> args = {"run", "--machine", test_paths::tests_dir() + "/machines/h200.json",
                                     "--tune=+precision", "--"};
    args.insert(args.end(), row.command.begin(), row.command.end());
    ProcessResult r = run_gpuenv(args, o);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const bool loads = row.why.empty();
    EXPECT_EQ(r.out, loads ? "True unset\n" : "False unset\n") << row.command[1] << ": " << r.err;
    EXPECT_EQ(r.err.find("run under bf16 autocast") != std::string::npos, loads) << r.err;
    if (loads) continue;
    EXPECT_NE(r.err.find("--tune=+precision: the job's Python will not load gpuenv's start-up hook: " + row.why),
              std::string::npos) << r.err;
    // The TF32 override stays on, and the plan or run says what it lacks without the hook.
    EXPECT_NE(r.err.find("TF32 stays on (TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 needs no hook)"), std::string::npos)
        << r.err;
  }
}

TEST(Explain, ShowsTheLastVerdictAndEachChange) {
  std::string root = temp_dir();
  std::vector<std::string> cmd = {"python3", kHook + "/loaders.py"};
  store_input_bound(root + "/gpuenv.db", cmd);
  ProcessResult r = run_gpuenv({"explain", "--tune=-pin_memory", "--", cmd[0], cmd[1]}, tune_env(root));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Feedback from job 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("input-bound: the GPU was busy 8%"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("num_workers=15  (refuse: --tune=-num_workers or GPUENV_TUNE_SKIP=num_workers)"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pin_memory=True  (refused)"), std::string::npos) << r.out;
  r = run_gpuenv({"explain", "--", "python3", "never-ran.py"}, tune_env(root));
  EXPECT_NE(r.out.find("this command has not run under gpuenv run here yet"), std::string::npos) << r.out;
}

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& cmd) {
  args.push_back("--");
  args.insert(args.end(), cmd.begin(), cmd.end());
  return args;
}

// issue 37: explain --json carried no feedback. After a watched run, its
// "feedback" holds the job as `report --json ID` prints it, verdict and all;
// the plan's keys come first, as before.
TEST(Explain, JsonCarriesTheFeedback) {
  std::string root = temp_dir();
  ProcessOptions o = tune_env(root);
  std::vector<std::string> cmd = {"python3", kHook + "/steps.py"};
  ProcessResult r = run_gpuenv(with({"run"}, cmd), o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_NE(r.err.find("job 1: "), std::string::npos) << r.err;
  json job = report_json({"1"}, o);
  ASSERT_TRUE(job["verdict"].is_object()) << job;
  r = run_gpuenv(with({"explain", "--json"}, cmd), o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json plan = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(plan.is_object()) << r.out;
  EXPECT_TRUE(plan.contains("settings")) << r.out;
  json fb = plan["feedback"];
  EXPECT_EQ(fb["command_asked"], true) << fb;
  EXPECT_EQ(fb["last_job"]["id"], 1) << fb;
  EXPECT_EQ(fb["last_job"]["verdict"], job["verdict"]) << fb;
  EXPECT_EQ(fb["last_job"], job) << "the job as report --json 1 prints it";
  EXPECT_TRUE(fb.contains("tune_would_change")) << fb;
  EXPECT_EQ(r.out.rfind("\n  \"feedback\": {"), r.out.find("\n  \"feedback\"")) << "one key, the last";
  EXPECT_GT(r.out.find("\n  \"feedback\""), r.out.find("\n  \"settings\"")) << r.out;
  // The text face: the same section as before.
  r = run_gpuenv(with({"explain"}, cmd), o);
  EXPECT_NE(r.out.find("Feedback from job 1 (python3 "), std::string::npos) << r.out;
  // A command that never ran: asked, no job; no command and a store with no job would be null.
  r = run_gpuenv({"explain", "--json", "--", "python3", "never-ran.py"}, o);
  fb = json::parse(r.out, nullptr, false)["feedback"];
  EXPECT_EQ(fb["command_asked"], true) << r.out;
  EXPECT_TRUE(fb["last_job"].is_null()) << r.out;
  r = run_gpuenv({"explain", "--json"}, tune_env(temp_dir()));
  json empty = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(empty.contains("feedback")) << r.out;
  EXPECT_TRUE(empty["feedback"].is_null()) << "no command, no job stored: null";
}

// issue 24, 1-3: the second --tune applied nothing (its verdict had no settings), plain runs forgot the tuning.
TEST(TuneProfile, EachRunRefinesItAndPlainRunsApplyWhatItKept) {
  std::string root = temp_dir();
  std::vector<std::string> cmd = {"python3", kHook + "/steps.py"};
  store_input_bound(root + "/gpuenv.db", cmd, 30);  // untuned: 30 s
  ProcessOptions o = tune_env(root);
  ProcessResult r = run_gpuenv(with({"run", "--tune"}, cmd), o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("get num_workers=15,pin_memory=True,persistent_workers=True"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tuning profile: num_workers=15,pin_memory=True,persistent_workers=True: "), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("the next --tune tries num_workers=11"), std::string::npos) << r.err;
  json job = report_json({"2"}, o);
  EXPECT_EQ(job["tuned"], "num_workers=15,pin_memory=True,persistent_workers=True");
  EXPECT_EQ(job["speed"]["steps"], 12);
  EXPECT_EQ(job["speed"]["batches"], 12);
  // At least 4 ms a step (its sleep): at most 250 a second, and a loaded
  // machine can only make it fewer.
  EXPECT_GT(job["speed"]["steps_per_s"].get<double>(), 0);
  EXPECT_LT(job["speed"]["steps_per_s"].get<double>(), 300);
  EXPECT_TRUE(job["speed"]["exit_tail_s"].is_number()) << job["speed"];
  EXPECT_TRUE(job["speed"]["first_step_s"].is_number()) << job["speed"];
  // The second --tune: the profile's next try, not nothing.
  r = run_gpuenv(with({"run", "--tune"}, cmd), o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("get num_workers=11,pin_memory=True,persistent_workers=True (the tuning profile's next try"),
            std::string::npos) << r.err;
  EXPECT_EQ(json::parse(r.out, nullptr, false)["num_workers"], 11) << r.out;
  // A plain run applies what the profile kept, and says so.
  r = run_gpuenv(with({"run"}, cmd), o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("the tuning profile of this command applies num_workers="), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--no-tune runs without it"), std::string::npos) << r.err;
  EXPECT_GT(json::parse(r.out, nullptr, false)["num_workers"].get<int>(), 0) << r.out;
  // --no-tune: untuned.
  r = run_gpuenv(with({"run", "--no-tune"}, cmd), o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("--no-tune: runs untuned"), std::string::npos) << r.err;
  EXPECT_EQ(json::parse(r.out, nullptr, false)["num_workers"], 0) << r.out;
  EXPECT_EQ(report_json({"5"}, o)["tuned"], "");
  r = run_gpuenv(with({"run", "--tune", "--no-tune"}, cmd), o);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--tune and --no-tune: choose one"), std::string::npos) << r.err;
  // report: steps/s per job and the speed-up against the command's first measured run (job 2).
  r = run_gpuenv({"report"}, o);
  EXPECT_NE(r.out.find("STEPS/S"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(1.00x)"), std::string::npos) << r.out;
  json five = report_json({"5"}, o);
  EXPECT_LT(five["speedup"].get<double>(), 0.6) << five;  // untuned: 20 ms a step against 4 ms
  r = run_gpuenv({"report", "5"}, o);
  EXPECT_NE(r.out.find("speed: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("x job 2, the command's first run)"), std::string::npos) << r.out;
  r = run_gpuenv(with({"explain"}, cmd), o);
  EXPECT_NE(r.out.find("  tuning profile: plain runs apply num_workers="), std::string::npos) << r.out;
}

// issue 40: a script that passes its own num_workers. The record holds what the hook applied,
// the script's setting apart, and the profile never tries num_workers for it.
TEST(TuneProfile, TheRecordHoldsWhatTheHookApplied) {
  std::string root = temp_dir();
  std::vector<std::string> cmd = {"python3", kHook + "/steps.py", "4"};
  store_input_bound(root + "/gpuenv.db", cmd, 30);
  ProcessOptions o = tune_env(root);
  ProcessResult r = run_gpuenv(with({"run", "--tune"}, cmd), o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out, nullptr, false)["num_workers"], 4) << r.out;
  EXPECT_NE(r.err.find("tuning profile: the script sets num_workers=4 itself: --tune leaves num_workers alone"),
            std::string::npos) << r.err;
  json job = report_json({"2"}, o);
  EXPECT_EQ(job["tuned"], "pin_memory=True,persistent_workers=True") << job;
  EXPECT_EQ(job["context"]["script_settings"], "num_workers=4") << job["context"];
  r = run_gpuenv(with({"run", "--tune"}, cmd), o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("get num_workers="), std::string::npos) << r.err;
}

// issue 24, 6: each rank's gpuenv said its verdict.
TEST(Watch, OnlyRankZeroSaysTheVerdict) {
  std::string root = temp_dir();
  ProcessOptions o = watched("h200_job", root);
  o.env["RANK"] = "1";
  ProcessResult r = run_gpuenv({"run", "--", "sleep", "0.3"}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("gpuenv: job 1: "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("last run of this command"), std::string::npos) << r.err;
  o.env["RANK"] = "0";
  r = run_gpuenv({"run", "--", "sleep", "0.3"}, o);
  EXPECT_NE(r.err.find("gpuenv: job 2: "), std::string::npos) << r.err;
  o.env.erase("RANK");
  o.env["SLURM_PROCID"] = "3";
  r = run_gpuenv({"run", "--", "sleep", "0.3"}, o);
  EXPECT_EQ(r.err.find("gpuenv: job 3: "), std::string::npos) << r.err;
  EXPECT_EQ(report_json({"3"}, o)["rank"], 3);  // still recorded
}

}  // namespace
}  // namespace gpuenv::testing
