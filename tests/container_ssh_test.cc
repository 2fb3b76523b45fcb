// End to end: the real sshd, started by `gpuenv serve ssh` on a loopback
// port, and the real ssh client. As root the tests make a throwaway user
// (useradd); otherwise sshd runs as, and lets in, the current user.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "container_support.h"
#include "process.h"

namespace gpuenv {
namespace {

using testing::Background;
using testing::ProcessResult;
using testing::run_gpuenv;
using testing::run_process;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A name no other test (nor another run of this one) is using.
std::string unique_user(const char* tag) {
  return "gpuenvt" + std::to_string(getpid()) + tag;
}

std::map<std::string, std::string> parse_env(const std::string& out) {
  std::map<std::string, std::string> env;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line))
    if (size_t eq = line.find('='); eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
  return env;
}

std::string slurp(const std::string& path) {
  std::string out;
  ProcessResult r = run_process({"cat", path});
  return r.out;
}

class SshTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(access("/usr/sbin/sshd", X_OK), 0) << "no /usr/sbin/sshd: run `make deps`";
    user_ = std::make_unique<testing::TestUser>(unique_user("s"));
    ASSERT_EQ(user_->error(), "");
    dir_ = std::make_unique<testing::SecureTempDir>();
    key_ = dir_->path() + "/id_ed25519";
    ASSERT_EQ(run_process({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key_}).exit_code, 0);
    ASSERT_EQ(run_process({"cp", testing::tests_dir() + "/machines/h100.json", machine()}).exit_code, 0);
    port_ = testing::free_port();
  }

  std::string machine() const { return dir_->path() + "/h100.json"; }
  std::string run_dir() const { return dir_->path() + "/run"; }
  std::string host_key() const { return dir_->path() + "/hostkeys/ssh_host_ed25519_key"; }

  std::vector<std::string> serve_args(bool with_key_file = true) const {
    std::vector<std::string> a = {"serve", "ssh", "--port", std::to_string(port_), "--ip", "127.0.0.1",
                                  "--user", user_->name(), "--host-key-dir", dir_->path() + "/hostkeys",
                                  "--run-dir", run_dir(), "--machine", machine()};
    if (with_key_file) a.insert(a.end(), {"--authorized-keys", key_ + ".pub"});
    return a;
  }

  std::unique_ptr<Background> start(const std::map<std::string, std::string>& env = {},
                                    bool with_key_file = true) {
    std::vector<std::string> argv = {GPUENV_BIN};
    for (const auto& a : serve_args(with_key_file)) argv.push_back(a);
    auto b = std::make_unique<Background>(argv, env);
    EXPECT_TRUE(b->wait_for_log("Server listening on 127.0.0.1 port", 20000)) << b->log();
    return b;
  }

  ProcessResult ssh(const std::string& user, const std::string& command,
                    const std::vector<std::string>& options = {}) const {
    std::vector<std::string> argv = {"ssh", "-F", "/dev/null", "-i", key_, "-p", std::to_string(port_),
                                     "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no",
                                     "-o", "UserKnownHostsFile=/dev/null", "-o", "IdentitiesOnly=yes",
                                     "-o", "ConnectTimeout=10", "-o", "LogLevel=ERROR"};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), {user + "@127.0.0.1", command});
    return run_process(argv, {{}, "", 30000});
  }

  std::unique_ptr<testing::TestUser> user_;
  std::unique_ptr<testing::SecureTempDir> dir_;
  std::string key_;
  int port_ = 0;
};

TEST_F(SshTest, KeyLoginWorksAndSessionsGetThePlan) {
  // A value the user set is kept by the plan: quotes, #, $ and \ must survive sshd_config.
  std::string tricky = "bf16 # it's \"quoted\" $HOME \\n";
  std::map<std::string, std::string> env = {{"GPUENV_AUTOCAST_DTYPE", tricky}};
  auto b = start(env);
  ProcessResult r = ssh(user_->name(), "env");
  ASSERT_EQ(r.exit_code, 0) << r.err << "\n" << b->log();
  auto session = parse_env(r.out);
  env["HOME"] = user_->home();  // the plan is the user's: caches under the user's home
  auto plan = run_gpuenv({"env", "--format", "json", "--machine", machine()}, testing::with_env(env));
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  auto want = nlohmann::json::parse(plan.out);
  ASSERT_GT(want.size(), 5u);
  for (const auto& [name, value] : want.items()) EXPECT_EQ(session[name], value) << name;
  EXPECT_EQ(session["TORCH_CUDA_ARCH_LIST"], "9.0");
  EXPECT_EQ(session["GPUENV_AUTOCAST_DTYPE"], tricky);
  EXPECT_EQ(session["PATH"], getenv("PATH")) << "PATH passes through";
  EXPECT_EQ(session["USER"], user_->name());
  EXPECT_EQ(ssh(user_->name(), "id -u").out, std::to_string(user_->uid()) + "\n");
}

TEST_F(SshTest, RootAndPasswordLoginsAreRefused) {
  auto b = start();
  ProcessResult root = ssh("root", "true");
  EXPECT_EQ(root.exit_code, 255);
  EXPECT_TRUE(contains(root.err, "Permission denied")) << root.err;
  // The server offers nothing but publickey: no password, no keyboard-interactive.
  ProcessResult pw = ssh(user_->name(), "true",
                         {"-o", "PubkeyAuthentication=no", "-o",
                          "PreferredAuthentications=password,keyboard-interactive"});
  EXPECT_EQ(pw.exit_code, 255);
  EXPECT_TRUE(contains(pw.err, "Permission denied (publickey).")) << pw.err;
  ProcessResult t = run_process({"/usr/sbin/sshd", "-T", "-f", run_dir() + "/sshd_config"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  for (const char* line : {"permitrootlogin no\n", "passwordauthentication no\n",
                           "kbdinteractiveauthentication no\n", "authenticationmethods publickey\n"})
    EXPECT_TRUE(contains(t.out, line)) << line;
  EXPECT_TRUE(contains(t.out, "allowusers " + user_->name() + "\n"));
  ProcessResult health = run_process(
      {"python3", testing::tests_dir() + "/../docker/healthcheck.py", "ssh", std::to_string(port_)});
  EXPECT_EQ(health.exit_code, 0) << "the image's HEALTHCHECK: " << health.err;
}

TEST_F(SshTest, HostKeyIsMadeOnceAndKept) {
  std::string first_key;
  {
    auto b = start();
    first_key = slurp(host_key());
    ASSERT_FALSE(first_key.empty());
  }
  struct stat st;
  ASSERT_EQ(stat(host_key().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat((run_dir() + "/sshd_config").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto again = start();
  EXPECT_EQ(slurp(host_key()), first_key);
  EXPECT_FALSE(contains(again->log(), "generating")) << again->log();
}

TEST_F(SshTest, KeysFromTheEnvironment) {
  std::string pub = slurp(key_ + ".pub");
  auto b = start({{"GPUENV_SSH_AUTHORIZED_KEYS", pub}}, false);
  ProcessResult r = ssh(user_->name(), "echo in");
  EXPECT_EQ(r.out, "in\n") << r.err << b->log();
}

TEST_F(SshTest, RefusesToStartWithoutAnAuthorizedKey) {
  ProcessResult r = run_gpuenv(serve_args(false));
  EXPECT_EQ(r.exit_code, 78);
  EXPECT_TRUE(contains(r.err, "refusing to start sshd: no authorized key")) << r.err;
  std::string comments = dir_->path() + "/keys";
  std::ofstream(comments) << "# nobody\n\n";
  std::vector<std::string> args = serve_args(false);
  args.insert(args.end(), {"--authorized-keys", comments});
  EXPECT_EQ(run_gpuenv(args).exit_code, 78);
  EXPECT_FALSE(testing::wait_for_port(port_, 100));
}

TEST_F(SshTest, RefusesRootAndLockedUsers) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to name another user";
  std::vector<std::string> args = serve_args();
  args[7] = "root";  // --user root
  ProcessResult r = run_gpuenv(args);
  EXPECT_EQ(r.exit_code, 78);
  EXPECT_TRUE(contains(r.err, "user root is root")) << r.err;
  testing::TestUser locked(unique_user("l"), true);
  ASSERT_EQ(locked.error(), "");
  args[7] = locked.name();
  r = run_gpuenv(args);
  EXPECT_EQ(r.exit_code, 78);
  EXPECT_TRUE(contains(r.err, "usermod -p '*' " + locked.name())) << r.err;
}

}  // namespace
}  // namespace gpuenv
