// End to end: the real Jupyter (Debian's jupyter-server: JupyterLab is not
// packaged, so this is the fallback at work), started by `gpuenv serve
// jupyter` on a loopback port, and stand-in Jupyter programs for the
// fallback order and what Jupyter is handed.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>

#include "act/serve/serve_common.h"
#include "container_support.h"
#include "process.h"
#include "test_paths.h"
#include "text_files.h"

namespace gpuenv {
namespace {

using testing::Background;
using testing::ProcessResult;
using testing::run_gpuenv;
using testing::run_process;

constexpr const char* kSystemPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// A chosen token long enough to be accepted (32 characters or more).
const std::string kChosen = "from-env-0123456789abcdef01234567";

using testing::contains;

using testing::slurp;

// The token gpuenv printed: "...?token=HEX\n".
std::string printed_token(const std::string& log) {
  size_t at = log.find("?token=");
  if (at == std::string::npos) return "";
  at += 7;
  return log.substr(at, log.find('\n', at) - at);
}

class JupyterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    user_ = std::make_unique<testing::TestUser>("gpuenvt" + std::to_string(getpid()) + "j");
    ASSERT_EQ(user_->error(), "");
    dir_ = std::make_unique<testing::SecureTempDir>();
    ASSERT_EQ(run_process({"cp", testing::tests_dir() + "/machines/h100.json", machine()}).exit_code, 0);
    port_ = testing::free_port();
  }

  std::string machine() const { return dir_->path() + "/h100.json"; }
  // As root, the default under the test user's home; otherwise a file of
  // the test's own, not the developer's.
  std::string token_file() const {
    return geteuid() == 0 ? user_->home() + "/.local/share/gpuenv/jupyter_token"
                          : dir_->path() + "/jupyter_token";
  }

  std::vector<std::string> serve_args() const {
    std::vector<std::string> a = {"serve", "jupyter", "--ip", "127.0.0.1", "--port",
                                  std::to_string(port_), "--root-dir", dir_->path(), "--user",
                                  user_->name(), "--machine", machine()};
    if (geteuid() != 0) a.insert(a.end(), {"--token-file", token_file()});
    return a;
  }

  // A stand-in Jupyter program that reports what it was given.
  void fake(const std::string& bin, const std::string& name) const {
    std::string err;
    ASSERT_TRUE(sys::create_exclusive(bin + "/" + name,
                                 "#!/bin/sh\n"
                                 "echo \"prog=${0##*/} uid=$(id -u)\"\n"
                                 "echo \"args=$*\"\n"
                                 "echo \"file=$JUPYTER_TOKEN_FILE token=$(cat \"$JUPYTER_TOKEN_FILE\")\"\n"
                                 "echo \"env=${JUPYTER_TOKEN-unset}/${GPUENV_JUPYTER_TOKEN-unset}\"\n"
                                 "echo \"arch=$TORCH_CUDA_ARCH_LIST\"\n",
                                 0755, &err))
        << err;
  }

  // As root, what the test made under the user's home becomes the user's.
  void give_to_user() const {
    if (geteuid() != 0) return;
    ASSERT_EQ(run_process({"chown", "-R", user_->name(), user_->home() + "/.local"}).exit_code, 0);
  }

  std::unique_ptr<testing::TestUser> user_;
  std::unique_ptr<testing::SecureTempDir> dir_;
  int port_ = 0;
};

TEST_F(JupyterTest, TheTokenGuardsTheApiAndTheServerIsNotRoot) {
  ASSERT_NE(testing::run_process({"sh", "-c", "command -v jupyter-server || command -v jupyter-notebook"},
                                 testing::with_env({{"PATH", kSystemPath}})).out, "")
      << "no Jupyter: run `make deps`";
  std::vector<std::string> argv = {test_paths::gpuenv_bin()};
  for (const auto& a : serve_args()) argv.push_back(a);
  Background b(argv, {{"PATH", kSystemPath}});
  ASSERT_TRUE(b.wait_for_log("?token=", 20000)) << b.log();
  std::string token = printed_token(b.log());
  ASSERT_EQ(token.size(), 32u) << b.log();
  ASSERT_TRUE(testing::wait_for_port(port_, 60000)) << b.log();

  int anonymous = testing::http_get_status(port_, "/api/status", {});
  EXPECT_TRUE(anonymous == 401 || anonymous == 403) << anonymous << "\n" << b.log();
  EXPECT_EQ(testing::http_get_status(port_, "/api/status", {"Authorization: token " + token}), 200)
      << b.log();
  int wrong = testing::http_get_status(port_, "/api/status", {"Authorization: token x" + token});
  EXPECT_TRUE(wrong == 401 || wrong == 403) << wrong;
  ProcessResult health = run_process(
      {"python3", testing::tests_dir() + "/../docker/healthcheck.py", "jupyter", std::to_string(port_)});
  EXPECT_EQ(health.exit_code, 0) << "the image's HEALTHCHECK: " << health.err;

  std::vector<uid_t> uids = testing::process_uids(b.pid());
  ASSERT_EQ(uids.size(), 4u);
  for (uid_t u : uids) EXPECT_EQ(u, user_->uid());
  if (geteuid() == 0) {
    EXPECT_NE(uids[0], 0u);
  }

  std::string proc = "/proc/" + std::to_string(b.pid());
  EXPECT_FALSE(contains(slurp(proc + "/cmdline"), token)) << "argv is world-readable";
  std::string environ = slurp(proc + "/environ");
  EXPECT_FALSE(contains(environ, token)) << "kernels would inherit it";
  EXPECT_TRUE(contains(environ, std::string("JUPYTER_TOKEN_FILE=") + token_file() + '\0'));
  EXPECT_TRUE(contains(environ, std::string("TORCH_CUDA_ARCH_LIST=9.0") + '\0')) << "kernels inherit the plan";

  struct stat st;
  ASSERT_EQ(stat(token_file().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_uid, user_->uid());
  EXPECT_EQ(slurp(token_file()), token);
}

TEST_F(JupyterTest, FallsBackInOrderAndHandsTheTokenOverByFile) {
  std::string bin = dir_->path() + "/bin";
  ASSERT_EQ(mkdir(bin.c_str(), 0755), 0);
  fake(bin, "jupyter-notebook");
  fake(bin, "jupyter-server");
  std::map<std::string, std::string> env = {{"PATH", bin + ":" + kSystemPath},
                                            {"GPUENV_JUPYTER_TOKEN", kChosen},
                                            {"JUPYTER_TOKEN", "ignored"}};
  ProcessResult r = run_gpuenv(serve_args(), testing::with_env(env));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "prog=jupyter-server uid=" + std::to_string(user_->uid()))) << r.out;
  EXPECT_TRUE(contains(r.out, "args=--no-browser --ip=127.0.0.1 --port=" + std::to_string(port_) +
                                  " --port-retries=0 --notebook-dir=" + dir_->path() + "\n"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "file=" + token_file() + " token=" + kChosen + "\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "env=unset/unset\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "arch=9.0\n")) << r.out;
  EXPECT_FALSE(contains(r.err, kChosen)) << "a given token is not printed";

  fake(bin, "jupyter-lab");
  r = run_gpuenv(serve_args(), testing::with_env(env));
  EXPECT_TRUE(contains(r.out, "prog=jupyter-lab")) << r.out;
  EXPECT_TRUE(contains(r.err, "http://127.0.0.1:" + std::to_string(port_) + "/lab")) << r.err;
}

TEST_F(JupyterTest, AShortChosenTokenIsRefused) {
  std::string bin = dir_->path() + "/bin";
  ASSERT_EQ(mkdir(bin.c_str(), 0755), 0);
  fake(bin, "jupyter-server");
  for (const char* name : {"GPUENV_JUPYTER_TOKEN", "JUPYTER_TOKEN"}) {
    ProcessResult r = run_gpuenv(serve_args(), testing::with_env({{"PATH", bin + ":" + kSystemPath},
                                                                  {name, "a"}}));
    EXPECT_EQ(r.exit_code, 78) << name;
    EXPECT_TRUE(contains(r.err, "the token is 1 characters long; it needs at least 32")) << r.err;
    EXPECT_TRUE(contains(r.err, "openssl rand -hex 32")) << r.err;
    EXPECT_FALSE(contains(r.out, "prog=")) << "Jupyter was not started";
  }
  // The same for a token file, and a FIFO there must not hang it.
  std::string file = token_file();
  std::string err;
  ASSERT_TRUE(sys::make_dirs(file.substr(0, file.rfind('/')), 0700, &err)) << err;
  ASSERT_TRUE(sys::create_exclusive(file, "short\n", 0600, &err)) << err;
  give_to_user();
  ProcessResult r = run_gpuenv(serve_args(), testing::with_env({{"PATH", bin + ":" + kSystemPath}}));
  EXPECT_EQ(r.exit_code, 78);
  EXPECT_TRUE(contains(r.err, file + ": the token is 5 characters long")) << r.err;
  ASSERT_EQ(unlink(file.c_str()), 0);
  ASSERT_EQ(mkfifo(file.c_str(), 0600), 0);
  give_to_user();
  r = run_gpuenv(serve_args(), testing::with_env({{"PATH", bin + ":" + kSystemPath}}));
  EXPECT_EQ(r.exit_code, 78);
  EXPECT_TRUE(contains(r.err, file + ": not a regular file (a FIFO)")) << r.err;
}

TEST_F(JupyterTest, NoJupyterInstalledIs127) {
  ProcessResult r = run_gpuenv(serve_args(), testing::with_env({{"PATH", dir_->path()}}));
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_TRUE(contains(r.err, "no Jupyter found on PATH")) << r.err;
}

TEST_F(JupyterTest, RefusesRootUnlessAllowedExplicitly) {
  if (geteuid() != 0) GTEST_SKIP() << "only root can be refused";
  ProcessResult r = run_gpuenv({"serve", "jupyter", "--port", std::to_string(port_)},
                               testing::with_env({{"PATH", kSystemPath}}));
  EXPECT_EQ(r.exit_code, 78);
  EXPECT_TRUE(contains(r.err, "refusing to start Jupyter")) << r.err;
  EXPECT_TRUE(contains(r.err, "--allow-root")) << r.err;
  r = run_gpuenv({"serve", "jupyter", "--user", "root"}, testing::with_env({{"PATH", kSystemPath}}));
  EXPECT_EQ(r.exit_code, 78);
}

}  // namespace
}  // namespace gpuenv
