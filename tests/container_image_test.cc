// docker/setup-image.sh step by step (in a scratch ROOT where it can be), the
// healthcheck, and the compose file. The Dockerfile itself is built and
// started for real by tests/image/test-image.sh (make test-image).
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <shadow.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>

#include "container_support.h"
#include "process.h"
#include "test_paths.h"
#include "text_files.h"

namespace gpuenv {
namespace {

using testing::ProcessResult;
using testing::run_process;

using testing::contains;

std::string repo() { return testing::tests_dir() + "/.."; }
std::string script() { return repo() + "/docker/setup-image.sh"; }
std::string healthcheck() { return repo() + "/docker/healthcheck.py"; }

using testing::slurp;

ProcessResult step(const std::vector<std::string>& args, const std::string& root = "") {
  std::vector<std::string> argv = {"sh", script()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::map<std::string, std::string> env = {{"ROOT", root}};
  if (const char* path = getenv("PATH")) env["PATH"] = std::string(path) + ":/usr/sbin:/sbin";
  return run_process(argv, {env, "", 60000});
}

struct Stat {
  mode_t mode = 0;
  uid_t uid = 0;
  bool ok = false;
};

Stat stat_of(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return {};
  return {static_cast<mode_t>(st.st_mode & 07777), st.st_uid, true};
}

class ScratchRoot : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpuenv-image-XXXXXX";
    root_ = mkdtemp(tmpl);
  }
  void TearDown() override { run_process({"rm", "-rf", root_}); }
  std::string root_;
};

// A uid no account uses, for the user step.
uid_t free_uid() {
  for (uid_t u = 64000; u < 65000; ++u)
    if (!getpwuid(u) && !getgrgid(u)) return u;
  return 0;
}

TEST(ContainerImage, ScriptsParse) {
  ProcessResult sh = run_process({"sh", "-n", script()});
  EXPECT_EQ(sh.exit_code, 0) << sh.err;
  ProcessResult py = run_process({"python3", "-c", "import ast, sys; ast.parse(open(sys.argv[1]).read())",
                                  healthcheck()});
  EXPECT_EQ(py.exit_code, 0) << py.err;
  ProcessResult usage = step({});
  EXPECT_EQ(usage.exit_code, 1);
  EXPECT_TRUE(contains(usage.err, "usage: setup-image.sh")) << usage.err;
  EXPECT_EQ(step({"frobnicate"}).exit_code, 1);
}

TEST(ContainerImage, UserStepIsIdempotentAndNeverLocked) {
  if (geteuid() != 0) GTEST_SKIP() << "useradd needs root";
  std::string name = "gpuenvt" + std::to_string(getpid()) + "i";
  // The account goes when the test ends, whichever assertion ends it.
  struct Remove {
    std::string name;
    ~Remove() {
      run_process({"/usr/sbin/userdel", "--remove", name});
      run_process({"/usr/sbin/userdel", "--remove", name + "x"});
      run_process({"/usr/sbin/groupdel", name});
    }
  } remove{name};
  uid_t uid = free_uid();
  ASSERT_NE(uid, 0u);
  for (int round = 0; round < 2; ++round) {
    ProcessResult r = step({"user", name, std::to_string(uid)});
    ASSERT_EQ(r.exit_code, 0) << "round " << round << ": " << r.err;
  }
  passwd* pw = getpwnam(name.c_str());
  ASSERT_NE(pw, nullptr);
  EXPECT_EQ(pw->pw_uid, uid);
  EXPECT_EQ(pw->pw_gid, uid) << "a group of its own, same id";
  EXPECT_EQ(std::string(pw->pw_shell), "/bin/bash");
  EXPECT_TRUE(stat_of(pw->pw_dir).ok) << pw->pw_dir;
  spwd* sp = getspnam(name.c_str());
  ASSERT_NE(sp, nullptr);
  EXPECT_EQ(std::string(sp->sp_pwdp), "*") << "sshd without PAM refuses locked ('!') accounts";
  ProcessResult other = step({"user", name, std::to_string(uid + 1)});
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_TRUE(contains(other.err, "exists with another uid")) << other.err;
  ProcessResult taken = step({"user", name + "x", "0"});
  EXPECT_EQ(taken.exit_code, 1);
  EXPECT_TRUE(contains(taken.err, "uid 0 is taken by root")) << taken.err;
}

TEST_F(ScratchRoot, DirsStepOwnersAndModes) {
  if (geteuid() != 0) GTEST_SKIP() << "chown needs root";
  testing::TestUser user("gpuenvt" + std::to_string(getpid()) + "d");
  ASSERT_EQ(user.error(), "");
  ProcessResult r = step({"dirs", user.name()}, root_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* dir : {"/workspace", "/cache"}) {
    Stat s = stat_of(root_ + dir);
    EXPECT_EQ(s.uid, user.uid()) << dir;
    EXPECT_EQ(s.mode, 0755u) << dir;
  }
  EXPECT_EQ(stat_of(root_ + "/etc/gpuenv").mode, 0755u);
  EXPECT_EQ(stat_of(root_ + "/etc/gpuenv/ssh").mode, 0700u) << "host keys: root's alone";
  EXPECT_EQ(stat_of(root_ + "/etc/gpuenv/ssh").uid, 0u);
  EXPECT_TRUE(stat_of(root_ + "/run/sshd").ok);
  EXPECT_EQ(step({"dirs", user.name()}, root_).exit_code, 0) << "again";
}

TEST_F(ScratchRoot, BashrcHookIsAddedOnceAndHarmlessWithoutThePlan) {
  ASSERT_EQ(run_process({"mkdir", "-p", root_ + "/etc"}).exit_code, 0);
  std::ofstream(root_ + "/etc/bash.bashrc") << "# distro lines\n";
  ASSERT_EQ(step({"bashrc"}, root_).exit_code, 0);
  ASSERT_EQ(step({"bashrc"}, root_).exit_code, 0);
  std::string rc = slurp(root_ + "/etc/bash.bashrc");
  EXPECT_EQ(rc.find("# distro lines\n"), 0u);
  size_t first = rc.find("/etc/profile.d/gpuenv.sh");
  ASSERT_NE(first, std::string::npos) << rc;
  EXPECT_EQ(rc.find("gpuenv: the plan", rc.find("gpuenv: the plan") + 1), std::string::npos) << rc;
  ProcessResult sourced = run_process({"sh", "-c", ". \"$1\"; echo rc=$?", "sh", root_ + "/etc/bash.bashrc"});
  EXPECT_TRUE(contains(sourced.out, "rc=0")) << sourced.out << sourced.err;
}

TEST_F(ScratchRoot, HostkeysStepDropsOnlyTheBakedKeys) {
  ASSERT_EQ(run_process({"mkdir", "-p", root_ + "/etc/ssh"}).exit_code, 0);
  for (const char* f : {"ssh_host_ed25519_key", "ssh_host_ed25519_key.pub", "ssh_host_rsa_key", "sshd_config"})
    std::ofstream(root_ + "/etc/ssh/" + f) << "x";
  ASSERT_EQ(step({"hostkeys"}, root_).exit_code, 0);
  EXPECT_FALSE(stat_of(root_ + "/etc/ssh/ssh_host_ed25519_key").ok);
  EXPECT_FALSE(stat_of(root_ + "/etc/ssh/ssh_host_rsa_key").ok);
  EXPECT_TRUE(stat_of(root_ + "/etc/ssh/sshd_config").ok);
}

TEST(ContainerImage, VerifyAndGlibcSteps) {
  EXPECT_EQ(step({"verify", test_paths::gpuenv_bin()}).exit_code, 0);
  testing::ScratchDir scratch;
  std::string broken = scratch.file("gpuenv", "#!/bin/sh\nexit 3\n");
  chmod(broken.c_str(), 0755);
  ProcessResult r = step({"verify", broken});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "does not run")) << r.err;
  ProcessResult ok = step({"check-glibc", test_paths::gpuenv_bin(), "2.99"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(contains(ok.out, "needs glibc 2.")) << ok.out;
  ProcessResult old = step({"check-glibc", test_paths::gpuenv_bin(), "2.2"});
  EXPECT_EQ(old.exit_code, 1);
  EXPECT_TRUE(contains(old.err, "the runtime image has 2.2")) << old.err;
}

TEST(ContainerImage, HealthcheckModes) {
  auto run = [](const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"python3", healthcheck()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_process(argv, {{}, "", 30000});
  };
  EXPECT_EQ(run({"none"}).exit_code, 0);
  int closed = testing::free_port();
  EXPECT_EQ(run({"ssh", std::to_string(closed)}).exit_code, 1);
  ProcessResult j = run({"jupyter", std::to_string(closed)});
  EXPECT_EQ(j.exit_code, 1);
  EXPECT_TRUE(contains(j.err, "jupyter on port " + std::to_string(closed))) << j.err;
  EXPECT_EQ(run({"bogus"}).exit_code, 1);
}

TEST(ContainerImage, ComposeHasGpusSharedMemoryPortsAndTheCache) {
  std::string c = slurp(repo() + "/docker/compose.yaml");
  for (const char* want : {"driver: nvidia", "count: all", "capabilities: [gpu]", "shm_size:", "ipc:",
                           "\"127.0.0.1:8888:8888\"", "\"127.0.0.1:2222:22\"", "gpuenv-cache:/cache",
                           "gpuenv-ssh-host-keys:/etc/gpuenv/ssh", "dockerfile: docker/Dockerfile",
                           "[\"gpuenv\", \"serve\", \"jupyter\"]", "[\"gpuenv\", \"serve\", \"ssh\"]"})
    EXPECT_TRUE(contains(c, want)) << want;
}

// No VOLUME (each `docker run` without -v would leave an anonymous volume);
// the devel target exists, a build without --target ends at the runtime, and
// both targets add the same gpuenv files.
TEST(ContainerImage, DockerfileHasNoVolumeAndADevelTargetThatIsNotTheDefault) {
  std::string d = slurp(repo() + "/docker/Dockerfile");
  EXPECT_EQ(d.find("\nVOLUME"), std::string::npos);
  size_t devel = d.find("\nFROM base AS devel\n");
  size_t runtime = d.rfind("\nFROM ");
  ASSERT_NE(devel, std::string::npos);
  ASSERT_LT(devel, runtime);
  EXPECT_EQ(d.substr(runtime, 22), "\nFROM base AS runtime\n") << "the last stage is the default target";
  std::string devel_stage = d.substr(devel, runtime - devel), runtime_stage = d.substr(runtime);
  EXPECT_TRUE(contains(devel_stage, "setup-image.sh devel"));
  std::istringstream lines(runtime_stage);
  int copies = 0;
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("COPY ", 0) == 0 || line.rfind("RUN ", 0) == 0) {
      ++copies;
      EXPECT_TRUE(contains(devel_stage, "\n" + line + "\n")) << "devel lacks: " << line;
    }
  EXPECT_GE(copies, 4);
}

// The image test builds with GPUENV_FROM=prebuilt; a user's build compiles
// (source). Both stages must give the later stages the same files, and the
// build the later stages copy from is whichever the argument names.
TEST(ContainerImage, PrebuiltStageGivesWhatTheSourceStageBuilds) {
  std::string d = slurp(repo() + "/docker/Dockerfile");
  EXPECT_TRUE(contains(d, "\nARG GPUENV_FROM=source\n"));
  EXPECT_TRUE(contains(d, "\nFROM build-${GPUENV_FROM} AS build\n"));
  size_t source = d.find(" AS build-source\n"), prebuilt = d.find("\nFROM scratch AS build-prebuilt\n");
  ASSERT_NE(source, std::string::npos);
  ASSERT_NE(prebuilt, std::string::npos);
  std::string prebuilt_stage = d.substr(prebuilt, d.find("\nFROM ", prebuilt + 1) - prebuilt);
  std::istringstream lines(d);
  int copied = 0;
  for (std::string line; std::getline(lines, line);) {
    const std::string from = "COPY --from=build /src/build-portable/";
    if (line.rfind(from, 0) != 0) continue;
    std::string file = line.substr(from.size(), line.find(' ', from.size()) - from.size());
    ++copied;
    EXPECT_TRUE(contains(prebuilt_stage, "prebuilt/" + file)) << "build-prebuilt lacks " << file;
    EXPECT_TRUE(contains(d.substr(source, prebuilt - source), "build-portable/" + file)) << file;
  }
  EXPECT_EQ(copied, 6) << "gpuenv, the kubelet client and the plugin, in the devel and runtime stages";
}

TEST(ContainerImage, MakeDepsInstallsTheProgramsTheTestsRun) {
  std::string m = slurp(repo() + "/Makefile");
  for (const char* pkg : {" openssh-server", " openssh-client", " jupyter-server"})
    EXPECT_TRUE(contains(m, pkg)) << pkg;
}

}  // namespace
}  // namespace gpuenv
