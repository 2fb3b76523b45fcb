#include "act/serve/serve_ssh.h"

#include <gtest/gtest.h>

#include <map>

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

constexpr const char* kEd25519 =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGAKxRVN75JGXWdJpikAmakeey1Stgj3SIv7vWn3Tqfz u@h";
constexpr const char* kEcdsa =
    "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBD6F/7MP/wiCJJyAX1UmGa8+"
    "FI0KHKNTVgqLf9CRzyPjHmdi88vjgCTtRj5C+xuMj09WbNOOMYZVZzFYx7WUTs0=";
constexpr const char* kRsa =
    "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQCv/rfjlDfnEFhmpRnmBKkUH+JuQ67gZH20fIFcxiu7QvJ8iG/39uE/"
    "EV0OZ4b5SBmt4rQF00LkmJfMpUusB0MQWu13nA0fb/GqbPICGQPC5Q7Xi9owxVYMv1i0B0SuhT1O7NIwbCY8hvvcMT9OndJQ2jz"
    "QCOLIqv3BUQsAEYjjuQ== u@h";
// Blobs made for the test: only their leading string matters to the check.
constexpr const char* kSk =
    "sk-ssh-ed25519@openssh.com AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29tAAAAIAEBAQEBAQEBAQEBAQEBAQEBAQEB"
    "AQEBAQEBAQEBAQEBAAAABHNzaDo=";
constexpr const char* kCert =
    "ssh-ed25519-cert-v01@openssh.com AAAAIHNzaC1lZDI1NTE5LWNlcnQtdjAxQG9wZW5zc2guY29tAAAAIG5ubm5ubm5ubm"
    "5ubm5ubm5ubm5ubm5ubm5ubm5ubm5u";

TEST(ServeSsh, PublicKeysOfEachTypeWithOrWithoutOptions) {
  for (const std::string key : {kEd25519, kEcdsa, kRsa, kSk, kCert}) {
    EXPECT_EQ(public_key_problem(key), "") << key;
    EXPECT_EQ(public_key_problem("no-pty,from=\"10.0.0.0/8\" " + key), "") << key;
    EXPECT_EQ(public_key_problem("command=\"echo \\\"hi there\\\"\",no-agent-forwarding\t" + key), "")
        << "a quoted option holds blanks and escaped quotes";
  }
  EXPECT_EQ(public_key_problem("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGAKxRVN75JGXWdJpikAmakeey1Stgj3SIv7vWn3Tqfz"),
            "") << "no comment";
}

TEST(ServeSsh, WhatIsNotAPublicKeyIsRefusedWithoutQuotingIt) {
  struct Row {
    std::string line, why;
  };
  std::vector<Row> rows = {
      {"root:$y$j9T$SECRETHASH:19000:0:99999:7:::", "no key type"},
      {"daemon:*:19000:0:99999:7::: with words", "not a key type OpenSSH accepts"},
      {"-----BEGIN OPENSSH PRIVATE KEY-----", "a PEM line, as in a private key (pass the .pub file)"},
      {"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW", "no key type"},
      {"ssh-dss AAAAB3NzaC1kc3MAAACBAP", "not a key type OpenSSH accepts"},
      {"ssh-ed25519", "the key is not base64"},
      {"ssh-ed25519 AAAA!C3Nz", "the key is not base64"},
      {"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGAKxRVN75JGXWdJpikAmakeey1Stgj3SIv7vWn3Tqf",
       "the key is not base64"},  // unpadded
      {"ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIGAKxRVN75JGXWdJpikAmakeey1Stgj3SIv7vWn3Tqfz",
       "the key's data is not of its type"},
      {"ssh-ed25519 AAAD6HNzaC1lZDI1NTE5", "the key's data is not of its type"},  // length 1000
      {"ssh-ed25519 AAAA", "the key's data is not of its type"},
      {"command=\"open ssh-ed25519 AAAA", "an options field whose quote is not closed"},
      {std::string("ssh-ed25519 AAAA\x1b[2J"), "a control character"},
      {std::string("ssh-ed25519 A\0B", 15), "a control character"},
  };
  for (const auto& r : rows) {
    std::string why = public_key_problem(r.line);
    EXPECT_EQ(why, r.why) << r.line;
    EXPECT_EQ(why.find("SECRET"), std::string::npos);
  }
}

TEST(ServeSsh, AddKeyLinesKeepsKeysAndNamesTheOthersByLine) {
  KeyLines k;
  add_key_lines(std::string("# a comment\n\n  ") + kEd25519 + "\r\nroot:$y$SECRET:1::\n" + kRsa, "F", &k);
  add_key_lines(std::string(kEcdsa) + "\n-----BEGIN RSA PRIVATE KEY-----\n", "ENV", &k);
  EXPECT_EQ(k.keys, 3);
  EXPECT_EQ(k.text, std::string(kEd25519) + "\n" + kRsa + "\n" + kEcdsa + "\n");
  EXPECT_EQ(k.rejected,
            (std::vector<std::string>{
                "F line 4: not an OpenSSH public key: no key type",
                "ENV line 2: not an OpenSSH public key: a PEM line, as in a private key (pass the "
                ".pub file)"}));
}

TEST(ServeSsh, ConfigTurnsOffForwardingAndOldAlgorithms) {
  std::string cfg = render_sshd_config(sample());
  for (const char* want :
       {"AllowTcpForwarding no", "AllowAgentForwarding no", "AllowStreamLocalForwarding no",
        "PermitTunnel no", "GatewayPorts no", "X11Forwarding no", "MaxAuthTries 3"})
    EXPECT_TRUE(has_line(cfg, want)) << want << "\n" << cfg;
  EXPECT_TRUE(has_line(cfg, std::string("KexAlgorithms ") + kSshKex));
  EXPECT_TRUE(has_line(cfg, std::string("Ciphers ") + kSshCiphers));
  EXPECT_TRUE(has_line(cfg, std::string("MACs ") + kSshMacs));
  for (const char* old : {"sha1", "cbc", "md5", "nistp", "diffie-hellman"})
    EXPECT_EQ((std::string(kSshKex) + kSshCiphers + kSshMacs).find(old), std::string::npos) << old;
  SshdConfig c = sample();
  c.allow_forwarding = true;
  cfg = render_sshd_config(c);
  EXPECT_TRUE(has_line(cfg, "AllowTcpForwarding local")) << "ssh -L only, never -R";
  EXPECT_TRUE(has_line(cfg, "AllowAgentForwarding no"));
}

TEST(ServeSsh, PassthroughIsNarrowedToTheUser) {
  Account a;
  a.name = "gpuenv-no-such-user";
  a.uid = 65534;
  a.gid = 65534;
  std::map<std::string, std::string> env = {{"PATH", "bin:/usr/bin:/usr/bin:/gpuenv-missing:/bin"},
                                            {"LD_LIBRARY_PATH", "lib:/gpuenv-missing"}};
  auto get = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  EXPECT_EQ(passthrough_env(a, get), (EnvList{{"PATH", "/usr/bin:/bin"}}));
  env = {{"PATH", "."}};
  EXPECT_EQ(passthrough_env(a, get), (EnvList{{"PATH", kUserPath}}));
  env.clear();
  EXPECT_EQ(passthrough_env(a, get), EnvList{});
}

TEST(ServeSsh, SessionsGetGpuenvsOwnConfigurationVerbatim) {
  Account a;
  a.uid = 65534;
  std::map<std::string, std::string> env = {{"GPUENV_CACHE_ROOT", "/cache"},
                                            {"GPUENV_NVML_LIBRARY", "/opt/x/libnvidia-ml.so.1"},
                                            {"GPUENV_CUDA_LIBRARY", ""},
                                            {"PYTHONUSERBASE", "/cache/pip"},
                                            {"GPUENV_OTHER", "y"}};
  auto get = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  EXPECT_EQ(passthrough_env(a, get),
            (EnvList{{"GPUENV_CACHE_ROOT", "/cache"},
                     {"GPUENV_NVML_LIBRARY", "/opt/x/libnvidia-ml.so.1"},
                     {"PYTHONUSERBASE", "/cache/pip"}}));
}

}  // namespace
}  // namespace gpuenv
