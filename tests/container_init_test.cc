// End to end: `gpuenv init` as a container entrypoint. Signals reach the
// command, its exit code comes back, orphans are reaped, the plan files are
// written.
#include <filesystem>

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "container_support.h"
#include "process.h"
#include "wait_until.h"
#include "test_paths.h"
#include "text_files.h"

namespace gpuenv {
namespace {

using testing::Background;
using testing::run_gpuenv;
using testing::wait_until;

using testing::slurp;

using testing::contains;

class InitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpuenv-init-e2e-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { testing::run_process({"rm", "-rf", dir_}); }

  // gpuenv init with the plan files in the temp dir, then `args`.
  std::vector<std::string> init(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {test_paths::gpuenv_bin(), "init", "--etc-dir", dir_ + "/etc", "--profile-d",
                                     dir_ + "/profile.d", "--cache-root", dir_ + "/cache"};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  std::vector<std::string> init_args(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = init(args);
    argv.erase(argv.begin());
    return argv;
  }
  std::string machine() const { return testing::tests_dir() + "/machines/h100.json"; }

  // Starts init with a child that traps `sig`, waits until the trap is set,
  // sends `sig` to init and returns init's exit code.
  int signal_round_trip(const char* sig_name, int sig, int trap_code) {
    std::string script = "trap 'exit " + std::to_string(trap_code) + "' " + sig_name +
                         "; echo ready; while :; do sleep 0.05; done";
    Background b(init({"--", "sh", "-c", script}), {});
    EXPECT_TRUE(b.wait_for_log("ready", 20000)) << b.log();
    kill(b.pid(), sig);
    int code = -1;
    EXPECT_TRUE(b.wait_exit(20000, &code)) << b.log();
    return code;
  }

  std::string dir_;
};

TEST_F(InitTest, ForwardsSigtermAndReturnsTheChildsExitCode) {
  EXPECT_EQ(signal_round_trip("TERM", SIGTERM, 42), 42);
}

TEST_F(InitTest, ForwardsSigint) { EXPECT_EQ(signal_round_trip("INT", SIGINT, 43), 43); }

TEST_F(InitTest, ForwardsSighupAndSigusr1) {
  EXPECT_EQ(signal_round_trip("HUP", SIGHUP, 44), 44);
  EXPECT_EQ(signal_round_trip("USR1", SIGUSR1, 45), 45);
}

TEST_F(InitTest, ExitCodesPassThrough) {
  EXPECT_EQ(run_gpuenv(init_args({"--", "sh", "-c", "exit 3"})).exit_code, 3);
  EXPECT_EQ(run_gpuenv(init_args({"true"})).exit_code, 0);
  auto killed = run_gpuenv(init_args({"sh", "-c", "kill -KILL $$"}));
  EXPECT_EQ(killed.exit_code, 128 + SIGKILL);
  EXPECT_TRUE(contains(killed.err, "ended by SIGKILL")) << killed.err;
}

TEST_F(InitTest, CommandNotFound127NotExecutable126) {
  auto r = run_gpuenv(init_args({"gpuenv-no-such-command"}));
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_TRUE(contains(r.err, "cannot run gpuenv-no-such-command")) << r.err;
  std::string plain = dir_ + "/not-executable";
  std::ofstream(plain) << "#!/bin/sh\n";  // mode 0644
  EXPECT_EQ(run_gpuenv(init_args({plain})).exit_code, 126);
}

TEST_F(InitTest, ReapsOrphansAndLeavesNoZombie) {
  // The subshell exits at once, so the inner sh is orphaned and re-parented
  // to init (a child subreaper), which must reap it when it exits: once the
  // file `go` appears. The command itself ends once `done` does.
  std::string go = dir_ + "/go", done = dir_ + "/done";
  std::string script = "(sh -c 'until [ -e \"$0\" ]; do sleep 0.05; done' \"$0\" &); echo ready; "
                       "until [ -e \"$1\" ]; do sleep 0.05; done; exit 5";
  Background b(init({"--", "sh", "-c", script, go, done}), {});
  ASSERT_TRUE(b.wait_for_log("ready", 20000)) << b.log();
  EXPECT_TRUE(wait_until([&] { return testing::children_of(b.pid()).size() == 2; })) << "sh and the orphan";
  std::ofstream(go).close();
  EXPECT_TRUE(wait_until([&] { return testing::children_of(b.pid()).size() == 1; })) << "only sh is left";
  for (pid_t c : testing::children_of(b.pid()))
    EXPECT_NE(testing::process_state(c), 'Z') << "zombie " << c << "\n" << b.log();
  std::ofstream(done).close();
  int code = -1;
  ASSERT_TRUE(b.wait_exit(20000, &code));
  EXPECT_EQ(code, 5);
}

TEST_F(InitTest, CommandArgumentsKeepTheirOrder) {
  auto r = run_gpuenv(init_args({"--", "printf", "<%s>", "-c", "--", "--machine", "x"}));
  EXPECT_EQ(r.out, "<-c><--><--machine><x>");
  r = run_gpuenv(init_args({"printf", "<%s>", "-c", "--log-format"}));
  EXPECT_EQ(r.out, "<-c><--log-format>");
}

TEST_F(InitTest, WritesThePlanFilesAndAppliesThePlan) {
  auto r = run_gpuenv(init_args({"--machine", machine(), "--", "sh", "-c", "echo $TORCH_CUDA_ARCH_LIST"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "9.0\n");
  auto dotenv = run_gpuenv({"env", "--format", "dotenv", "--machine", machine(), "--cache-root", dir_ + "/cache"});
  std::string env_file = slurp(dir_ + "/etc/env");
  EXPECT_TRUE(contains(env_file, dotenv.out)) << env_file;
  struct stat st;
  ASSERT_EQ(stat((dir_ + "/etc/env").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  auto sourced = testing::run_process(
      {"sh", "-c", ". \"$1\" && echo \"$TORCH_CUDA_ARCH_LIST $CUDA_DEVICE_ORDER\"", "sh",
       dir_ + "/profile.d/gpuenv.sh"});
  EXPECT_EQ(sourced.out, "9.0 PCI_BUS_ID\n");
}

TEST_F(InitTest, BannerNamesGpusAndSettings) {
  auto r = run_gpuenv(init_args({"--machine", machine(), "true"}));
  EXPECT_TRUE(contains(r.err, "1 GPU, driver")) << r.err;
  EXPECT_TRUE(contains(r.err, "NVIDIA H100")) << r.err;
  EXPECT_TRUE(contains(r.err, "  TORCH_CUDA_ARCH_LIST=9.0\n")) << r.err;
  EXPECT_EQ(r.out, "");  // stdout is the command's
}

TEST_F(InitTest, WithoutAGpuStartsInCpuModeWithAWarning) {
  auto r = run_gpuenv(init_args({"sh", "-c", "echo started"}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "started\n");
  EXPECT_TRUE(contains(r.err, "gpuenv: warning: no NVIDIA GPU: running in CPU mode")) << r.err;
}

TEST_F(InitTest, JsonLogsAreOneObjectPerLine) {
  auto r = run_gpuenv(init_args({"--log-format", "json", "--", "sh", "-c", "exit 4"}));
  EXPECT_EQ(r.exit_code, 4);
  std::istringstream lines(r.err);
  std::string line;
  std::vector<std::string> msgs;
  while (std::getline(lines, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << line;
    ASSERT_TRUE(j.contains("time") && j.contains("level")) << line;
    msgs.push_back(j["msg"]);
    if (j["msg"] == "exited") {
      EXPECT_EQ(j["code"], 4);
    }
    if (j["msg"] == "cpu mode") {
      EXPECT_EQ(j["level"], "warning");
    }
  }
  EXPECT_EQ(msgs.front(), "machine");
  EXPECT_NE(std::find(msgs.begin(), msgs.end(), "cpu mode"), msgs.end());
  EXPECT_EQ(std::count(msgs.begin(), msgs.end(), "wrote"), 2);
  EXPECT_EQ(msgs.back(), "exited");
  EXPECT_EQ(run_gpuenv(init_args({"--log-format", "yaml", "true"})).exit_code, 2);
}

TEST_F(InitTest, LogFormatFromTheEnvironment) {
  // The image's ENTRYPOINT ends in `--`: flags reach init through the environment.
  auto r = run_gpuenv(init_args({"true"}), testing::with_env({{"GPUENV_LOG_FORMAT", "json"}}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.rfind("{\"time\":", 0), 0u) << r.err;
}

TEST_F(InitTest, UnwritableDirsWarnAndGoOn) {
  auto r = run_gpuenv({"init", "--etc-dir", "/proc/gpuenv-no", "--profile-d", "/proc/gpuenv-no",
                       "sh", "-c", "echo ran"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ran\n");
  EXPECT_TRUE(contains(r.err, "gpuenv: warning: cannot write /proc/gpuenv-no/env")) << r.err;
}

TEST_F(InitTest, DirsFromTheEnvironment) {
  auto r = run_gpuenv({"init", "true"}, testing::with_env({{"GPUENV_ETC_DIR", dir_ + "/e"},
                                                            {"GPUENV_PROFILE_D", dir_ + "/p"}}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(access((dir_ + "/e/env").c_str(), R_OK), 0);
  EXPECT_EQ(access((dir_ + "/p/gpuenv.sh").c_str(), R_OK), 0);
}

TEST_F(InitTest, AValueWithANewlineIsLeftOutOfTheEnvFileOnly) {
  // A variable the user set is kept as is, newline included.
  std::map<std::string, std::string> env = {{"PYTORCH_CUDA_ALLOC_CONF", "a\nb"}};
  auto r = run_gpuenv(init_args({"--machine", machine(), "sh", "-c", "printf %s \"$PYTORCH_CUDA_ALLOC_CONF\""}),
                      testing::with_env(env));
  EXPECT_EQ(r.out, "a\nb");
  EXPECT_TRUE(contains(r.err, "PYTORCH_CUDA_ALLOC_CONF left out of " + dir_ + "/etc/env")) << r.err;
  EXPECT_FALSE(contains(slurp(dir_ + "/etc/env"), "PYTORCH_CUDA_ALLOC_CONF"));
  EXPECT_TRUE(contains(slurp(dir_ + "/profile.d/gpuenv.sh"), "PYTORCH_CUDA_ALLOC_CONF='a\nb'"));
}

TEST_F(InitTest, NoCommandRunsAShell) {
  auto r = run_gpuenv(init_args({}), testing::with_env({{"SHELL", "/bin/sh"}}, "echo $((6 * 7))\n"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "42\n");
}

// A scenario whose driver-version query takes `ms`: sensing that hangs.
std::string slow_nvml(const std::string& dir, int ms) {
  std::string path = dir + "/slow.txt";
  std::ofstream(path) << "system driver=580.95.05 cuda=13000\n"
                      << "fault fn=nvmlSystemGetDriverVersion delay_ms=" << ms << "\n";
  return path;
}

std::map<std::string, std::string> nvml_env(const std::string& scenario) {
  return {{"GPUENV_NVML_LIBRARY", (test_paths::fake_dir() + "/libnvidia-ml.so.1")},
          {"GPUENV_CUDA_LIBRARY", "/nonexistent/libcuda.so.1"},
          {"FAKE_NVML_SCENARIO", scenario}};
}

TEST_F(InitTest, SigtermWhileSensingEndsInitWith143) {
  auto env = nvml_env(slow_nvml(dir_, 60000));
  std::string trace = env["FAKE_NVML_TRACE"] = dir_ + "/nvml-trace";
  Background b(init({"--", "sh", "-c", "echo ran-the-command"}), env);
  ASSERT_TRUE(wait_until([&] { return contains(slurp(trace), "nvmlSystemGetDriverVersion"); }))
      << "sensing did not reach the slow query: " << b.log();
  kill(b.pid(), SIGTERM);
  int code = -1;
  ASSERT_TRUE(b.wait_exit(20000, &code)) << "init ignored SIGTERM while sensing: " << b.log();
  EXPECT_EQ(code, 143) << b.log();
  EXPECT_TRUE(contains(b.log(), "SIGTERM while sensing")) << b.log();
  EXPECT_FALSE(contains(b.log(), "ran-the-command")) << b.log();
}

TEST_F(InitTest, SensingThatHangsEndsInitWithAnError) {
  auto env = nvml_env(slow_nvml(dir_, 60000));
  env["GPUENV_SENSE_TIMEOUT_S"] = "1";
  Background b(init({"--", "sh", "-c", "echo started"}), env);
  int code = -1;
  ASSERT_TRUE(b.wait_exit(30000, &code)) << b.log();  // not the 60 s the query would take
  EXPECT_EQ(code, 1) << b.log();
  EXPECT_TRUE(contains(b.log(), "did not finish in 1 s")) << b.log();
}

TEST_F(InitTest, AStoppedCommandStillEndsOnSigterm) {
  std::string script = "echo ready; kill -STOP $$; sleep 30";
  Background b(init({"--", "sh", "-c", script}), {});
  ASSERT_TRUE(b.wait_for_log("ready", 20000)) << b.log();
  ASSERT_TRUE(wait_until([&] {
    std::vector<pid_t> c = testing::children_of(b.pid());
    return c.size() == 1 && testing::process_state(c[0]) == 'T';
  })) << "the child did not stop itself: " << b.log();
  kill(b.pid(), SIGTERM);
  int code = -1;
  ASSERT_TRUE(b.wait_exit(20000, &code)) << "init never sent SIGCONT: " << b.log();
  EXPECT_EQ(code, 143) << b.log();
}

class InitAsRoot : public InitTest {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "dropping privileges needs root";
    InitTest::SetUp();
    chmod(dir_.c_str(), 0755);  // the user reaches the cache root inside
  }
  testing::ProcessResult as(const std::map<std::string, std::string>& extra, const std::string& script) {
    std::map<std::string, std::string> env = {{"GPUENV_USER", "nobody"}, {"GPUENV_CACHE_ROOT", dir_ + "/cache"}};
    for (const auto& [k, v] : extra) env[k] = v;
    return run_gpuenv(init_args({"--machine", machine(), "--", "sh", "-c", script}), testing::with_env(env));
  }
};

TEST_F(InitAsRoot, TheCommandRunsAsGpuenvUserAndOwnsTheCacheRoot) {
  mkdir((dir_ + "/cache").c_str(), 0755);  // root's, as a bind mount would be
  auto r = as({}, "id -un; echo $HOME; touch \"$TRITON_CACHE_DIR/k\" && echo wrote");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "nobody\n/nonexistent\nwrote\n") << r.err;
  EXPECT_TRUE(contains(r.err, "the command runs as nobody")) << r.err;
  struct stat st;
  ASSERT_EQ(stat((dir_ + "/cache").c_str(), &st), 0);
  EXPECT_NE(st.st_uid, 0u);
  EXPECT_EQ(access((dir_ + "/etc/env").c_str(), R_OK), 0) << "the plan files are written as root first";
}

// A cache root the plan refuses (writable by others, no sticky bit) is not
// walked: nothing is created under it and nothing in it changes owner.
TEST_F(InitAsRoot, ARefusedCacheRootIsLeftAlone) {
  std::string cache = dir_ + "/cache";
  mkdir(cache.c_str(), 0777);
  chmod(cache.c_str(), 0777);
  mkdir((cache + "/planted").c_str(), 0755);
  auto r = as({}, "echo ran");
  EXPECT_EQ(r.out, "ran\n") << r.err;
  struct stat st;
  ASSERT_EQ(stat(cache.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u) << r.err;
  ASSERT_EQ(stat((cache + "/planted").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u) << r.err;
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(cache)) names.push_back(e.path().filename());
  EXPECT_EQ(names, std::vector<std::string>{"planted"}) << r.err;
}

// pip as the user lands on the cache root; a command that keeps root is not
// pointed at a directory the user can write.
TEST_F(InitAsRoot, TheUsersPipGoesToTheCacheRootAndRootsDoesNot) {
  std::string base = dir_ + "/cache/pip";
  auto r = as({{"PATH", "/usr/bin:/bin"}}, "echo \"$PYTHONUSERBASE $PIP_BREAK_SYSTEM_PACKAGES $PATH\"");
  EXPECT_EQ(r.out, base + " 1 " + base + "/bin:/usr/bin:/bin\n") << r.err;
  struct stat st;
  ASSERT_EQ(stat((base + "/bin").c_str(), &st), 0) << "init makes the bin it puts on PATH";
  EXPECT_NE(st.st_uid, 0u);
  auto root = as({{"GPUENV_RUN_AS_ROOT", "1"}, {"PATH", "/usr/bin:/bin"}}, "echo \"[$PYTHONUSERBASE] $PATH\"");
  EXPECT_EQ(root.out, "[] /usr/bin:/bin\n") << root.err;
  auto own = as({{"PYTHONUSERBASE", "/elsewhere"}, {"PATH", "/usr/bin:/bin"}}, "echo \"$PYTHONUSERBASE $PATH\"");
  EXPECT_EQ(own.out, "/elsewhere /usr/bin:/bin\n") << own.err;
}

TEST_F(InitAsRoot, RootIsAnOptInThatTheLogNames) {
  auto r = as({{"GPUENV_RUN_AS_ROOT", "1"}}, "id -u");
  EXPECT_EQ(r.out, "0\n") << r.err;
  EXPECT_TRUE(contains(r.err, "gpuenv: warning: the command runs as root: GPUENV_RUN_AS_ROOT=1")) << r.err;
  auto bad = as({{"GPUENV_USER", "no-such-user-gpuenv"}}, "echo ran");
  EXPECT_EQ(bad.exit_code, 78) << bad.err;
  EXPECT_EQ(bad.out, "");
}

}  // namespace
}  // namespace gpuenv
