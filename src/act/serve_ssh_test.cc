#include "act/serve_ssh.h"

#include <gtest/gtest.h>

namespace gpuenv {
namespace {

SshdConfig sample() {
  SshdConfig c;
  c.port = 2222;
  c.listen = "127.0.0.1";
  c.user = "dev";
  c.host_keys = {"/etc/gpuenv/ssh/ssh_host_ed25519_key"};
  c.authorized_keys = "/run/gpuenv/sshd/authorized_keys";
  c.pid_file = "/run/gpuenv/sshd/sshd.pid";
  c.env = {{"PATH", "/opt/conda/bin:/usr/bin"}, {"TORCH_CUDA_ARCH_LIST", "8.0 9.0"}};
  return c;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

bool has_line(const std::string& text, const std::string& line) {
  for (const auto& l : lines(text))
    if (l == line) return true;
  return false;
}

TEST(ServeSsh, ConfigLocksEverythingButKeysForOneUser) {
  std::string cfg = render_sshd_config(sample());
  for (const char* want :
       {"Port 2222", "ListenAddress \"127.0.0.1\"", "HostKey \"/etc/gpuenv/ssh/ssh_host_ed25519_key\"",
        "PidFile \"/run/gpuenv/sshd/sshd.pid\"",
        "AuthorizedKeysFile \"/run/gpuenv/sshd/authorized_keys\"", "AuthenticationMethods publickey",
        "PermitRootLogin no", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
        "PermitEmptyPasswords no", "PermitUserEnvironment no", "UsePAM no", "StrictModes yes",
        "AllowUsers dev"})
    EXPECT_TRUE(has_line(cfg, want)) << want << "\n" << cfg;
}

TEST(ServeSsh, EveryVariableGoesOnTheOneSetEnvLine) {
  std::string cfg = render_sshd_config(sample());
  int setenv_lines = 0;
  for (const auto& l : lines(cfg)) setenv_lines += l.rfind("SetEnv ", 0) == 0;
  EXPECT_EQ(setenv_lines, 1);  // sshd ignores every SetEnv line after the first
  EXPECT_TRUE(has_line(cfg, "SetEnv \"PATH=/opt/conda/bin:/usr/bin\" \"TORCH_CUDA_ARCH_LIST=8.0 9.0\""))
      << cfg;
}

TEST(ServeSsh, NoSetEnvLineWithoutVariables) {
  SshdConfig c = sample();
  c.env.clear();
  c.listen.clear();
  std::string cfg = render_sshd_config(c);
  EXPECT_EQ(cfg.find("SetEnv"), std::string::npos);
  EXPECT_EQ(cfg.find("ListenAddress"), std::string::npos);
}

TEST(ServeSsh, PercentInTheKeysPathIsEscaped) {
  SshdConfig c = sample();
  c.authorized_keys = "/run/100%/keys";
  EXPECT_TRUE(has_line(render_sshd_config(c), "AuthorizedKeysFile \"/run/100%%/keys\""));
}

TEST(ServeSsh, Quote) {
  EXPECT_EQ(sshd_quote("plain"), "\"plain\"");
  EXPECT_EQ(sshd_quote("a b"), "\"a b\"");
  EXPECT_EQ(sshd_quote("say \"hi\""), "\"say \\\"hi\\\"\"");
  EXPECT_EQ(sshd_quote("it's"), "\"it\\'s\"");
  EXPECT_EQ(sshd_quote("back\\slash"), "\"back\\\\slash\"");
  EXPECT_EQ(sshd_quote("#not a comment"), "\"#not a comment\"");
}

TEST(ServeSsh, SessionEnvPassthroughThenPlanSkippingNewlines) {
  Plan p;
  for (auto [name, value] : EnvList{{"A", "1"}, {"B", "x\ny"}}) {
    Setting s;
    s.name = name;
    s.value = value;
    p.settings.push_back(s);
  }
  std::vector<std::string> skipped;
  EnvList env = session_env(p, {{"PATH", "/bin"}, {"LD_LIBRARY_PATH", "a\rb"}}, &skipped);
  EXPECT_EQ(env, (EnvList{{"PATH", "/bin"}, {"A", "1"}}));
  EXPECT_EQ(skipped, (std::vector<std::string>{"LD_LIBRARY_PATH", "B"}));
}

TEST(ServeSsh, PassthroughNames) {
  EXPECT_EQ(ssh_passthrough_names(), (std::vector<std::string>{"PATH", "LD_LIBRARY_PATH"}));
}

TEST(ServeSsh, CountKeys) {
  EXPECT_EQ(count_keys(""), 0);
  EXPECT_EQ(count_keys("\n  \n# just a comment\n"), 0);
  EXPECT_EQ(count_keys("ssh-ed25519 AAAA a@b\n# c\n\nssh-rsa BBBB"), 2);
  EXPECT_EQ(count_keys("  ssh-ed25519 AAAA\r\n"), 1);
}

}  // namespace
}  // namespace gpuenv
