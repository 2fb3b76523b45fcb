// The serve sequences end to end with fakes: the account, the programs on
// PATH, the user switch, sshd's install and the exec are recorded; the
// environment is a map; the token file and --root-dir are real, under the
// test's own directory.
#include "flow/serve.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>

#include "builders.h"
#include "container_support.h"
#include "decide/decide.h"
#include "model/exit_codes.h"

namespace gpuenv::flow {
namespace {

namespace machine = gpuenv::testing::machine;

constexpr const char* kJupyter = "/opt/conda/bin/jupyter-lab";
constexpr const char* kKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGAKxRVN75JGXWdJpikAmakeey1Stgj3SIv7vWn3Tqfz u@h";

struct ServeSaid {
  Severity level;
  std::string event, text;
};

struct ServeFakes {
  testing::ScratchDir dir;
  Account account{"dev", 1000, 1000, "", "/bin/bash"};
  std::optional<std::string> refusal;  // the account cannot be used
  uid_t euid = 0;
  std::string program = kJupyter;
  std::map<std::string, std::string> environ = {{"PATH", "/usr/bin:/bin"}};
  bool sensed = true;
  std::vector<std::string> steps;
  std::optional<std::vector<std::string>> exec_argv;
  std::map<std::string, std::string> exec_env;  // the environment at exec
  int exec_code = kExitCommandNotFound;         // exec returns only on failure
  std::string exec_error = "cannot run it: No such file or directory";
  int install_code = 0;
  std::vector<ServeSaid> said;

  ServeFakes() { account.home = dir.path(); }

  ServeEnv env() {
    ServeEnv e;
    e.sense = [this](Machine* m, Options*) {
      steps.push_back("sense");
      *m = machine::h100(1);
      return sensed;
    };
    e.account = [this](const std::string& requested, bool allow_root, Account* out, std::string* err) {
      steps.push_back("account " + requested + (allow_root ? " root allowed" : ""));
      if (refusal) return *err = *refusal, false;
      return *out = account, true;
    };
    e.euid = [this] { return euid; };
    e.find_program = [this](const std::vector<std::string>& names) {
      EXPECT_EQ(names, jupyter_programs());
      return program;
    };
    e.become = [this](const Account& a, std::string*) { return steps.push_back("become " + a.name), true; };
    e.use_account_env = [this](const Account& a) { steps.push_back("env " + a.name); };
    e.install_sshd = [this](const SshOptions&, const Account& a, const KeyLines& keys, const Plan& plan,
                            std::string* config, std::string* err) {
      steps.push_back("install " + a.name + " " + std::to_string(keys.keys) + " keys, " +
                      std::to_string(plan.settings.size()) + " settings");
      *config = "/run/gpuenv/sshd/sshd_config";
      if (install_code) *err = "cannot write /run/gpuenv/sshd/sshd_config: read-only file system";
      return install_code;
    };
    e.getenv = [this](const char* name) {
      auto it = environ.find(name);
      return it == environ.end() ? nullptr : it->second.c_str();
    };
    e.setenv = [this](const std::string& name, const std::string& value) { environ[name] = value; };
    e.unsetenv = [this](const std::string& name) { environ.erase(name); };
    e.exec = [this](const std::vector<std::string>& argv, std::string* err) {
      steps.push_back("exec");
      exec_argv = argv;
      exec_env = environ;
      *err = exec_error;
      return exec_code;
    };
    e.log = [this](Severity level, const std::string& event, const std::string& text, nlohmann::ordered_json) {
      said.push_back({level, event, text});
    };
    e.log_event = [this](const LogEvent& ev) { said.push_back({ev.level, ev.msg, ev.text}); };
    return e;
  }
  JupyterOptions jupyter() {
    JupyterOptions o;
    o.root_dir = dir.path();
    o.port = 8899;
    return o;
  }
  SshOptions ssh() {
    SshOptions o;
    o.port = 2222;
    o.sshd = "/bin/sh";  // any absolute path to an executable
    return o;
  }
  std::vector<std::string> errors() const {
    std::vector<std::string> out;
    for (const ServeSaid& s : said)
      if (s.level == Severity::kError) out.push_back(s.text);
    return out;
  }
};

Plan planned() { return decide(machine::h100(1), Options{}); }

TEST(ServeFlow, JupyterGetsThePlanAndTheTokenFileButNoToken) {
  ServeFakes f;
  f.environ["JUPYTER_TOKEN"] = std::string(40, 'a');
  EXPECT_EQ(serve_jupyter(f.jupyter(), f.env()), kExitCommandNotFound);
  EXPECT_EQ(f.steps, (std::vector<std::string>{"account ", "become dev", "sense", "exec"}));
  ASSERT_TRUE(f.exec_argv);
  EXPECT_EQ(*f.exec_argv, (std::vector<std::string>{kJupyter, "--no-browser", "--ip=0.0.0.0", "--port=8899",
                                                    "--port-retries=0", "--notebook-dir=" + f.dir.path()}));
  std::string file = f.dir.path() + "/.local/share/gpuenv/jupyter_token";
  EXPECT_EQ(f.exec_env["JUPYTER_TOKEN_FILE"], file);
  EXPECT_FALSE(f.exec_env.count("JUPYTER_TOKEN"));
  Plan plan = planned();
  ASSERT_FALSE(plan.settings.empty());
  for (const Setting& s : plan.settings) EXPECT_EQ(f.exec_env[s.name], s.value) << s.name;
  ASSERT_FALSE(f.said.empty());
  EXPECT_EQ(f.said[0].text, "Jupyter at http://127.0.0.1:8899/lab; the token is in " + file +
                                " (from the environment)");
  // exec returns only when it fails: that is said, with its status.
  EXPECT_EQ(f.errors(), std::vector<std::string>{f.exec_error});
}

TEST(ServeFlow, JupyterAsRootGetsAllowRootAndAGeneratedTokenShownOnce) {
  ServeFakes f;
  f.account = Account{"root", 0, 0, f.dir.path(), "/bin/bash"};
  JupyterOptions o = f.jupyter();
  o.allow_root = true;
  f.exec_code = kExitCannotExecute;
  EXPECT_EQ(serve_jupyter(o, f.env()), kExitCannotExecute);
  EXPECT_EQ(f.steps.front(), "account  root allowed");
  ASSERT_TRUE(f.exec_argv);
  EXPECT_EQ(f.exec_argv->back(), "--allow-root");
  ASSERT_FALSE(f.said.empty());
  EXPECT_EQ(f.said[0].event, "jupyter");
  EXPECT_NE(f.said[0].text.find("?token="), std::string::npos) << f.said[0].text;
}

TEST(ServeFlow, JupyterRefusals) {
  {
    ServeFakes f;
    f.refusal = "GPUENV_USER is not set";
    EXPECT_EQ(serve_jupyter(f.jupyter(), f.env()), kExitServeConfig);
    EXPECT_EQ(f.errors(), std::vector<std::string>{"refusing to start Jupyter: GPUENV_USER is not set (Jupyter "
                                                   "runs as root only with --allow-root)"});
    EXPECT_FALSE(f.exec_argv);
  }
  {
    ServeFakes f;
    f.program = "";
    EXPECT_EQ(serve_jupyter(f.jupyter(), f.env()), kExitCommandNotFound);
    ASSERT_EQ(f.errors().size(), 1u);
    EXPECT_EQ(f.errors()[0].rfind("no Jupyter found on PATH (jupyter-lab, jupyter-server or jupyter-notebook)", 0),
              0u);
    EXPECT_FALSE(f.exec_argv);
  }
  {
    ServeFakes f;
    f.environ["GPUENV_JUPYTER_TOKEN"] = "short";
    EXPECT_EQ(serve_jupyter(f.jupyter(), f.env()), kExitServeConfig);
    ASSERT_EQ(f.errors().size(), 1u);
    EXPECT_NE(f.errors()[0].find("the token is 5 characters long"), std::string::npos) << f.errors()[0];
    EXPECT_FALSE(f.exec_argv);
  }
  {
    ServeFakes f;
    JupyterOptions o = f.jupyter();
    o.root_dir = f.dir.path() + "/missing";
    EXPECT_EQ(serve_jupyter(o, f.env()), kExitServeConfig);
    EXPECT_EQ(f.errors(), std::vector<std::string>{"--root-dir " + o.root_dir + ": No such file or directory"});
  }
  {
    ServeFakes f;
    f.sensed = false;
    EXPECT_EQ(serve_jupyter(f.jupyter(), f.env()), kExitBadInput);
    EXPECT_TRUE(f.errors().empty()) << "sensing says its own reason";
    EXPECT_FALSE(f.exec_argv);
  }
}

TEST(ServeFlow, SshdGetsItsConfigForTheUser) {
  ServeFakes f;
  f.environ["GPUENV_SSH_AUTHORIZED_KEYS"] = kKey;
  EXPECT_EQ(serve_ssh(f.ssh(), f.env()), kExitCommandNotFound);
  std::string settings = std::to_string(planned().settings.size());
  EXPECT_EQ(f.steps, (std::vector<std::string>{"account ", "env dev", "sense",
                                               "install dev 1 keys, " + settings + " settings", "exec"}));
  ASSERT_TRUE(f.exec_argv);
  EXPECT_EQ(*f.exec_argv, (std::vector<std::string>{"/bin/sh", "-D", "-e", "-f", "/run/gpuenv/sshd/sshd_config"}));
  ASSERT_FALSE(f.said.empty());
  EXPECT_EQ(f.said[0].text, "sshd on port 2222 for dev (1 authorized keys): ssh -p 2222 dev@HOST");
}

TEST(ServeFlow, SshdRefusals) {
  {
    ServeFakes f;  // no key anywhere
    EXPECT_EQ(serve_ssh(f.ssh(), f.env()), kExitServeConfig);
    ASSERT_EQ(f.errors().size(), 1u);
    EXPECT_EQ(f.errors()[0].rfind("refusing to start sshd: no authorized key: mount a public key file", 0), 0u)
        << f.errors()[0];
    EXPECT_FALSE(f.exec_argv);
  }
  {
    ServeFakes f;
    f.environ["GPUENV_SSH_AUTHORIZED_KEYS"] = kKey;
    SshOptions o = f.ssh();
    o.sshd = "sshd";
    EXPECT_EQ(serve_ssh(o, f.env()), kExitCommandNotFound);
    EXPECT_EQ(f.errors(), std::vector<std::string>{
                              "sshd sshd: must be an absolute path (install openssh-server, or pass --sshd PATH)"});
    EXPECT_FALSE(f.exec_argv);
  }
  {
    ServeFakes f;
    f.environ["GPUENV_SSH_AUTHORIZED_KEYS"] = kKey;
    f.install_code = kExitFailure;
    EXPECT_EQ(serve_ssh(f.ssh(), f.env()), kExitFailure);
    EXPECT_EQ(f.errors(),
              std::vector<std::string>{"cannot write /run/gpuenv/sshd/sshd_config: read-only file system"});
    EXPECT_FALSE(f.exec_argv);
  }
  {
    ServeFakes f;
    f.refusal = "root cannot be sshd's user";
    EXPECT_EQ(serve_ssh(f.ssh(), f.env()), kExitServeConfig);
    EXPECT_EQ(f.errors(), std::vector<std::string>{"refusing to start sshd: root cannot be sshd's user"});
  }
}

}  // namespace
}  // namespace gpuenv::flow
