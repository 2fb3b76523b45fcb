// End to end: the real sshd, started by `gpuenv serve ssh` on a loopback
// port, and the real ssh client. As root the tests make a throwaway user
// (useradd); otherwise sshd runs as, and lets in, the current user.
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

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

using testing::contains;

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

std::string cat_file(const std::string& path) {
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
    std::vector<std::string> argv = {test_paths::gpuenv_bin()};
    for (const auto& a : serve_args(with_key_file)) argv.push_back(a);
    auto b = std::make_unique<Background>(argv, env);
    EXPECT_TRUE(b->wait_for_log("Server listening on 127.0.0.1 port", 20000)) << b->log();
    return b;
  }

  std::vector<std::string> ssh_argv(const std::string& user, const std::string& command,
                                    const std::vector<std::string>& options) const {
    std::vector<std::string> argv = {"ssh", "-F", "/dev/null", "-i", key_, "-p", std::to_string(port_),
                                     "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no",
                                     "-o", "UserKnownHostsFile=/dev/null", "-o", "IdentitiesOnly=yes",
                                     "-o", "ConnectTimeout=10", "-o", "LogLevel=ERROR"};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.push_back(user + "@127.0.0.1");
    if (!command.empty()) argv.push_back(command);  // none with -N or -W
    return argv;
  }

  ProcessResult ssh(const std::string& user, const std::string& command,
                    const std::vector<std::string>& options = {}) const {
    return run_process(ssh_argv(user, command, options), {{}, "", 30000});
  }

  // serve_args() with --authorized-keys FILE instead of the test's key.
  ProcessResult serve_with_keys(const std::string& file) const {
    std::vector<std::string> args = serve_args(false);
    args.insert(args.end(), {"--authorized-keys", file});
    return run_gpuenv(args);
  }

  // Whether an `ssh -L` tunnel to sshd's own port carries sshd's greeting.
  bool local_forward_works() const {
    int local = testing::free_port();
    std::vector<std::string> forward = {"-N", "-L", std::to_string(local) + ":127.0.0.1:" +
                                                        std::to_string(port_)};
    Background tunnel(ssh_argv(user_->name(), "", forward), {});
    EXPECT_TRUE(testing::wait_for_port(local, 20000)) << tunnel.log();
    ProcessResult greet = run_process(
        {"python3", testing::tests_dir() + "/../docker/healthcheck.py", "ssh", std::to_string(local)});
    return greet.exit_code == 0;
  }

  // `ssh -R` with ExitOnForwardFailure: 0 when the server agreed.
  int remote_forward_status() const {
    return ssh(user_->name(), "true",
               {"-o", "ExitOnForwardFailure=yes", "-R", "0:127.0.0.1:" + std::to_string(port_)})
        .exit_code;
  }

  std::string sshd_settings() const {
    ProcessResult t = run_process({"/usr/sbin/sshd", "-T", "-f", run_dir() + "/sshd_config"});
    EXPECT_EQ(t.exit_code, 0) << t.err;
    return t.out;
  }

  std::unique_ptr<testing::TestUser> user_;
  std::unique_ptr<testing::SecureTempDir> dir_;
  std::string key_;
  int port_ = 0;
};

TEST_F(SshTest, KeyLoginWorksAndSessionsGetThePlan) {
  // A value the user set is kept by the plan: quotes, #, $ and \ must survive sshd_config.
  std::string tricky = "bf16 # it's \"quoted\" $HOME \\n";
  // gpuenv's PATH holds what the user must not get: a directory only root
  // can enter (as /root/.local/bin), a relative one, one anybody can write.
  std::string private_dir = dir_->path() + "/private", open_dir = dir_->path() + "/open";
  ASSERT_EQ(mkdir(private_dir.c_str(), 0700), 0);
  ASSERT_EQ(mkdir(open_dir.c_str(), 0777), 0);
  ASSERT_EQ(chmod(open_dir.c_str(), 0777), 0);
  std::string path = "/usr/local/bin:" + private_dir + ":bin:" + open_dir + ":/usr/bin:/usr/bin:/bin";
  std::map<std::string, std::string> env = {{"GPUENV_AUTOCAST_DTYPE", tricky}, {"PATH", path}};
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
  EXPECT_EQ(session["PATH"], geteuid() == 0 ? "/usr/local/bin:/usr/bin:/bin"
                                             : "/usr/local/bin:" + private_dir + ":/usr/bin:/bin")
      << "PATH passes through, narrowed to what the user can use";
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
    first_key = cat_file(host_key());
    ASSERT_FALSE(first_key.empty());
  }
  struct stat st;
  ASSERT_EQ(stat(host_key().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat((run_dir() + "/sshd_config").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // The keys sshd reads as the user: readable by the user's group, writable by root alone.
  ASSERT_EQ(stat((run_dir() + "/authorized_keys").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_EQ(st.st_uid, geteuid());
  EXPECT_EQ(st.st_gid, getpwnam(user_->name().c_str())->pw_gid);
  auto again = start();
  EXPECT_EQ(cat_file(host_key()), first_key);
  EXPECT_FALSE(contains(again->log(), "generating")) << again->log();
}

TEST_F(SshTest, KeysFromTheEnvironment) {
  std::string pub = cat_file(key_ + ".pub");
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

TEST_F(SshTest, AnAuthorizedKeysLinkOrFifoIsRefused) {
  // The user plants a link to a file only root can read, and root starts sshd with it.
  std::string ssh_dir = user_->home() + "/.ssh", link = ssh_dir + "/authorized_keys";
  mkdir(ssh_dir.c_str(), 0700);
  ASSERT_EQ(symlink("/etc/shadow", link.c_str()), 0);
  ProcessResult r = serve_with_keys(link);
  unlink(link.c_str());
  EXPECT_EQ(r.exit_code, 78);
  EXPECT_TRUE(contains(r.err, link + " is a symbolic link")) << r.err;
  EXPECT_FALSE(contains(r.err, "root:")) << r.err;
  EXPECT_NE(access((run_dir() + "/authorized_keys").c_str(), F_OK), 0);
  std::string fifo = dir_->path() + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0666), 0);
  r = serve_with_keys(fifo);  // a FIFO nobody writes to must not hang it
  EXPECT_EQ(r.exit_code, 78);
  EXPECT_TRUE(contains(r.err, fifo + ": not a regular file (a FIFO)")) << r.err;
}

TEST_F(SshTest, LinesThatAreNotPublicKeysAreNeitherCopiedNorShown) {
  std::string shadow;
  for (int i = 0; i < 28; ++i) shadow += "user" + std::to_string(i) + ":$y$j9T$SECRET:19000:0:99999:7:::\n";
  ProcessResult r = serve_with_keys(testing::ScratchDir().file("shadow", shadow));
  EXPECT_EQ(r.exit_code, 78);
  EXPECT_TRUE(contains(r.err, "line 1: not an OpenSSH public key: no key type")) << r.err;
  EXPECT_TRUE(contains(r.err, "and 18 more lines left out")) << r.err;
  EXPECT_TRUE(contains(r.err, "refusing to start sshd: no authorized key")) << r.err;
  EXPECT_FALSE(contains(r.err, "SECRET")) << r.err;
  // A private key (the host's, or the user's own by mistake) is not a public one.
  r = serve_with_keys(key_);
  EXPECT_EQ(r.exit_code, 78);
  EXPECT_TRUE(contains(r.err, "line 1: not an OpenSSH public key: a PEM line")) << r.err;
  std::string secret = cat_file(key_);
  std::string second_line = secret.substr(secret.find('\n') + 1, 40);
  EXPECT_FALSE(contains(r.err, second_line)) << r.err;
  EXPECT_NE(access((run_dir() + "/authorized_keys").c_str(), F_OK), 0);
  // Mixed: the key goes in, the rest is named by line and left out.
  std::string pub = cat_file(key_ + ".pub");
  std::string mixed = dir_->path() + "/mixed";
  std::ofstream(mixed) << "root:$y$SECRET:1::\n" << pub;
  std::vector<std::string> argv = {test_paths::gpuenv_bin()};
  for (const auto& a : serve_args(false)) argv.push_back(a);
  argv.insert(argv.end(), {"--authorized-keys", mixed});
  Background b(argv, {});
  ASSERT_TRUE(b.wait_for_log("Server listening on 127.0.0.1 port", 20000)) << b.log();
  EXPECT_TRUE(contains(b.log(), mixed + " line 1: not an OpenSSH public key")) << b.log();
  EXPECT_TRUE(contains(b.log(), "(1 authorized keys)")) << b.log();
  EXPECT_EQ(cat_file(run_dir() + "/authorized_keys"), pub);
  EXPECT_EQ(ssh(user_->name(), "echo in").out, "in\n") << b.log();
}

TEST_F(SshTest, ForwardingIsOffAndOnlyModernAlgorithmsAreOffered) {
  auto b = start();
  std::string t = sshd_settings();
  for (const char* want :
       {"allowtcpforwarding no\n", "allowagentforwarding no\n", "allowstreamlocalforwarding no\n",
        "permittunnel no\n", "gatewayports no\n", "x11forwarding no\n", "maxauthtries 3\n",
        "kexalgorithms sntrup761x25519-sha512@openssh.com,curve25519-sha256,curve25519-sha256@libssh.org\n",
        "ciphers chacha20-poly1305@openssh.com,aes256-gcm@openssh.com,aes128-gcm@openssh.com,"
        "aes256-ctr,aes128-ctr\n",
        "macs hmac-sha2-256-etm@openssh.com,hmac-sha2-512-etm@openssh.com,umac-128-etm@openssh.com\n"})
    EXPECT_TRUE(contains(t, want)) << want << t;
  EXPECT_FALSE(local_forward_works()) << b->log();
  EXPECT_EQ(remote_forward_status(), 255);
  ProcessResult w = ssh(user_->name(), "", {"-W", "127.0.0.1:" + std::to_string(port_)});
  EXPECT_NE(w.exit_code, 0);
  EXPECT_TRUE(contains(w.err, "stdio forwarding failed")) << w.err;
  // The same cipher (one that needs a MAC), hmac-sha1 refused, a SHA-2 EtM MAC taken.
  EXPECT_EQ(ssh(user_->name(), "true", {"-o", "MACs=hmac-sha1", "-c", "aes128-ctr"}).exit_code, 255);
  ProcessResult sha2 =
      ssh(user_->name(), "true", {"-o", "MACs=hmac-sha2-256-etm@openssh.com", "-c", "aes128-ctr"});
  EXPECT_EQ(sha2.exit_code, 0) << sha2.err;
  EXPECT_EQ(ssh(user_->name(), "true", {"-o", "KexAlgorithms=diffie-hellman-group14-sha1"}).exit_code,
            255);
}

TEST_F(SshTest, AllowForwardingLetsSshLThroughButNotSshR) {
  std::vector<std::string> argv = {test_paths::gpuenv_bin()};
  for (const auto& a : serve_args()) argv.push_back(a);
  argv.push_back("--allow-forwarding");
  Background b(argv, {});
  ASSERT_TRUE(b.wait_for_log("Server listening on 127.0.0.1 port", 20000)) << b.log();
  EXPECT_TRUE(contains(sshd_settings(), "allowtcpforwarding local\n"));
  EXPECT_TRUE(local_forward_works()) << b.log();
  EXPECT_EQ(remote_forward_status(), 255);
  b.stop();
  auto from_env = start({{"GPUENV_SSH_ALLOW_FORWARDING", "1"}});
  EXPECT_TRUE(contains(sshd_settings(), "allowtcpforwarding local\n"));
}

TEST_F(SshTest, RefusesDirectoriesAndHostKeysOthersCouldSwap) {
  // A host key that is a link (planted where the keys live) is neither followed nor tightened.
  std::string keys = dir_->path() + "/hostkeys", target = dir_->path() + "/elsewhere";
  ASSERT_EQ(mkdir(keys.c_str(), 0700), 0);
  std::ofstream(target) << "not a key";
  ASSERT_EQ(chmod(target.c_str(), 0644), 0);
  ASSERT_EQ(symlink(target.c_str(), host_key().c_str()), 0);
  ProcessResult r = run_gpuenv(serve_args());
  EXPECT_EQ(r.exit_code, 78);
  EXPECT_TRUE(contains(r.err, host_key() + " is a symbolic link")) << r.err;
  struct stat st;
  ASSERT_EQ(stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  // A run directory in a directory anybody can write to: another account
  // could swap sshd_config, and sshd's StrictModes would refuse the keys.
  std::string open_dir = dir_->path() + "/open";
  ASSERT_EQ(mkdir(open_dir.c_str(), 0777), 0);
  ASSERT_EQ(chmod(open_dir.c_str(), 01777), 0);
  std::vector<std::string> args = serve_args();
  args[11] = open_dir + "/run";  // --run-dir
  r = run_gpuenv(args);
  EXPECT_EQ(r.exit_code, 78);
  EXPECT_TRUE(contains(r.err, open_dir + " is writable by its group or by others")) << r.err;
}

TEST_F(SshTest, AsRootRefusesAHostKeyDirectoryTheUserOwns) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a directory to another user";
  std::vector<std::string> args = serve_args();
  args[9] = dir_->path() + "/users";  // --host-key-dir
  ASSERT_EQ(mkdir(args[9].c_str(), 0700), 0);
  ASSERT_EQ(chown(args[9].c_str(), user_->uid(), 0), 0);
  ProcessResult r = run_gpuenv(args);
  EXPECT_EQ(r.exit_code, 78);
  EXPECT_TRUE(contains(r.err, args[9] + " is owned by uid " + std::to_string(user_->uid()))) << r.err;
}

}  // namespace
}  // namespace gpuenv
