// The init sequence end to end with fakes: the user steps recorded, a
// machine sensed (or cut short, as a signal or the time limit cuts it), the
// plan files written to a map, the environment a map, the command's run
// recorded with the environment it saw.
#include "flow/init.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <map>
#include <optional>

#include "builders.h"
#include "decide/decide.h"
#include "model/exit_codes.h"

namespace gpuenv::flow {
namespace {

namespace machine = gpuenv::testing::machine;

constexpr const char* kCacheRoot = "/cache";

Account gpu_user() {
  Account a;
  a.name = "gpu";
  a.uid = 1000;
  a.gid = 1000;
  a.home = "/home/gpu";
  return a;
}

class FakeUserSteps : public InitUserSteps {
 public:
  bool choose(const std::vector<std::string>&, InitUser* out, std::string* err) override {
    if (refusal) return *err = *refusal, false;
    return *out = who, true;
  }
  void use_account_env(const Account& a) override { steps.push_back("env " + a.name); }
  void as_user(const Account& a, bool active, const std::function<void(const std::string&)>& body) override {
    steps.push_back(active ? "as " + a.name : "as self");
    body(switch_error);
    steps.push_back("back");
  }
  std::vector<std::string> prepare_cache(const std::vector<std::string>& d, const std::string& root,
                                         const Account* owner) override {
    dirs = d;
    steps.push_back("cache " + root + (owner ? " to " + owner->name : ""));
    return cache_problems;
  }
  bool drop_privileges(const Account& a, std::string* err) override {
    steps.push_back("drop " + a.name);
    if (drop_error) *err = *drop_error;
    return !drop_error;
  }

  InitUser who{InitUser::Kind::kDrop, gpu_user(), "GPUENV_USER"};
  std::optional<std::string> refusal, drop_error;
  std::string switch_error;
  std::vector<std::string> cache_problems;
  std::vector<std::string> steps;  // in order
  std::vector<std::string> dirs;
};

// Sensing cut short: the real env ends the process with end's status.
struct Ended {
  int code;
};

struct InitFakes {
  FakeUserSteps user;
  Machine machine = machine::h100(1);
  bool sensed = true;
  std::optional<int> cut_by;  // sensing ends by this signal, or 0: the time limit
  int limit_ms = 0;
  std::map<std::string, std::string> environ = {{"PATH", "/usr/bin:/bin"}};
  std::map<std::string, std::string> files;  // written
  std::optional<std::vector<std::string>> ran;
  std::map<std::string, std::string> ran_with;  // the environment the command saw
  ChildExit exit{true, 3, 0, false};
  std::string run_error;
  std::vector<LogEvent> said;

  InitEnv env() {
    InitEnv e;
    e.user = &user;
    e.sense = [this](int limit, const SenseEnd& end, Machine* m) {
      limit_ms = limit;
      user.steps.push_back("sense");
      if (cut_by) throw Ended{end(*cut_by)};
      *m = machine;
      return sensed;
    };
    e.plan_options = [](Machine*) {
      Options o;
      o.cache_root = kCacheRoot;
      return o;
    };
    e.write = [this](const std::string& path, const std::string& content, mode_t mode, std::string*) {
      EXPECT_EQ(mode, 0644u);
      files[path] = content;
      return true;
    };
    e.getenv = [this](const char* name) {
      auto it = environ.find(name);
      return it == environ.end() ? nullptr : it->second.c_str();
    };
    e.setenv = [this](const std::string& name, const std::string& value) { environ[name] = value; };
    e.run = [this](const std::vector<std::string>& argv, std::string* err) {
      user.steps.push_back("run");
      ran = argv;
      ran_with = environ;
      *err = run_error;
      return exit;
    };
    e.default_command = [] { return std::vector<std::string>{"/bin/sh"}; };
    e.log = [this](const LogEvent& ev) { said.push_back(ev); };
    return e;
  }
  InitRequest request(std::vector<std::string> argv = {"python", "train.py"}) {
    InitRequest r;
    r.files.etc_dir = "/etc/gpuenv";
    r.files.profile_d = "/etc/profile.d";
    r.argv = std::move(argv);
    return r;
  }
  std::optional<LogEvent> find(const std::string& msg) const {
    for (const LogEvent& e : said)
      if (e.msg == msg) return e;
    return std::nullopt;
  }
  std::vector<std::string> errors() const {
    std::vector<std::string> out;
    for (const LogEvent& e : said)
      if (e.msg == "error") out.push_back(e.text);
    return out;
  }
};

Plan planned(const Machine& m) {
  Options o;
  o.cache_root = kCacheRoot;
  return decide(m, o);
}

TEST(InitFlow, WritesThePlanBecomesTheUserAndReturnsTheCommandsStatus) {
  InitFakes f;
  EXPECT_EQ(run_init(f.request(), f.env()), 3);
  EXPECT_EQ(f.user.steps, (std::vector<std::string>{"env gpu", "as gpu", "sense", "back", "cache /cache to gpu",
                                                    "drop gpu", "run"}));
  Plan plan = planned(f.machine);
  ASSERT_FALSE(plan.settings.empty());
  std::vector<std::string> skipped;
  EXPECT_EQ(f.files["/etc/gpuenv/env"], render_env_file(plan, &skipped));
  EXPECT_TRUE(f.files.count("/etc/profile.d/gpuenv.sh"));
  ASSERT_TRUE(f.ran);
  EXPECT_EQ(*f.ran, (std::vector<std::string>{"python", "train.py"}));
  for (const Setting& s : plan.settings) EXPECT_EQ(f.ran_with[s.name], s.value) << s.name;
  // The user's pip on the cache root, its bin first on PATH and made beforehand.
  EXPECT_EQ(f.ran_with["PYTHONUSERBASE"], "/cache/pip");
  EXPECT_EQ(f.ran_with["PATH"].rfind("/cache/pip/bin:", 0), 0u) << f.ran_with["PATH"];
  EXPECT_NE(std::find(f.user.dirs.begin(), f.user.dirs.end(), "/cache/pip/bin"), f.user.dirs.end());
  ASSERT_TRUE(f.find("exited"));
  EXPECT_EQ(f.find("exited")->fields["code"], 3);
  EXPECT_EQ(f.find("starting")->fields["argv"], nlohmann::ordered_json({"python", "train.py"}));
  EXPECT_EQ(f.limit_ms, 60000);
  EXPECT_TRUE(f.errors().empty());
}

TEST(InitFlow, NoCommandRunsTheDefaultOne) {
  InitFakes f;
  EXPECT_EQ(run_init(f.request({}), f.env()), 3);
  ASSERT_TRUE(f.ran);
  EXPECT_EQ(*f.ran, std::vector<std::string>{"/bin/sh"});
}

TEST(InitFlow, RootKeptSensesAsItselfAndLeavesTheCacheRootAndPipAlone) {
  InitFakes f;
  f.user.who = InitUser{InitUser::Kind::kRoot, Account{}, "GPUENV_RUN_AS_ROOT=1"};
  EXPECT_EQ(run_init(f.request(), f.env()), 3);
  EXPECT_EQ(f.user.steps, (std::vector<std::string>{"as self", "sense", "back", "cache /cache", "run"}));
  EXPECT_FALSE(f.ran_with.count("PYTHONUSERBASE"));
  EXPECT_EQ(f.ran_with["PATH"], "/usr/bin:/bin");
}

TEST(InitFlow, SensingPastItsLimitEndsInitBeforeTheCommand) {
  InitFakes f;
  f.environ["GPUENV_SENSE_TIMEOUT_S"] = "5";
  f.cut_by = 0;
  try {
    run_init(f.request(), f.env());
    ADD_FAILURE() << "sensing was cut short, yet init went on";
  } catch (const Ended& e) {
    EXPECT_EQ(e.code, kExitFailure);
  }
  EXPECT_EQ(f.limit_ms, 5000);
  EXPECT_FALSE(f.ran);
  EXPECT_TRUE(f.files.empty());
  ASSERT_EQ(f.errors().size(), 1u);
  EXPECT_EQ(f.errors()[0].rfind("sensing the machine did not finish in 5 s (a hung NVIDIA driver", 0), 0u)
      << f.errors()[0];
}

TEST(InitFlow, ASignalWhileSensingEndsInitAsTheCommandWould) {
  InitFakes f;
  f.cut_by = SIGTERM;
  try {
    run_init(f.request(), f.env());
    ADD_FAILURE() << "sensing was cut short, yet init went on";
  } catch (const Ended& e) {
    EXPECT_EQ(e.code, kExitSignalBase + SIGTERM);
  }
  EXPECT_FALSE(f.ran);
  ASSERT_EQ(f.errors().size(), 1u);
  EXPECT_EQ(f.errors()[0], "SIGTERM while sensing the machine: exiting before the command started");
}

TEST(InitFlow, AUserThatCannotBeUsedIsRefusedBeforeSensing) {
  InitFakes f;
  f.user.refusal = "GPUENV_USER=nobody2: no such user";
  EXPECT_EQ(run_init(f.request(), f.env()), kExitServeConfig);
  EXPECT_TRUE(f.user.steps.empty());
  EXPECT_EQ(f.errors(), std::vector<std::string>{"GPUENV_USER=nobody2: no such user"});
}

TEST(InitFlow, AnUnreadableMachineStartsNothing) {
  InitFakes f;
  f.sensed = false;
  EXPECT_EQ(run_init(f.request(), f.env()), kExitBadInput);
  EXPECT_FALSE(f.ran);
  EXPECT_TRUE(f.files.empty());
}

TEST(InitFlow, FailingToBecomeTheUserStartsNothing) {
  InitFakes f;
  f.user.drop_error = "setuid: Operation not permitted";
  EXPECT_EQ(run_init(f.request(), f.env()), kExitFailure);
  EXPECT_FALSE(f.ran);
  EXPECT_EQ(f.errors(), std::vector<std::string>{"cannot become gpu: setuid: Operation not permitted"});
}

TEST(InitFlow, WhatGoesWrongOnTheWayIsSaidAndInitGoesOn) {
  InitFakes f;
  f.user.switch_error = "seteuid: Operation not permitted";
  f.user.cache_problems = {"chown /cache/x: Operation not permitted"};
  InitEnv env = f.env();
  env.write = [](const std::string&, const std::string&, mode_t, std::string* err) {
    *err = "read-only file system";
    return false;
  };
  EXPECT_EQ(run_init(f.request(), env), 3);
  EXPECT_EQ(f.errors(), std::vector<std::string>{"cannot sense as gpu: seteuid: Operation not permitted"});
  int write_failures = 0;
  for (const LogEvent& e : f.said) write_failures += e.msg == "write failed";
  EXPECT_EQ(write_failures, 2);
  ASSERT_TRUE(f.find("cache"));
  EXPECT_EQ(f.find("cache")->text, "the cache root: chown /cache/x: Operation not permitted");
}

TEST(InitFlow, ACommandThatCannotStartIsSaidWithItsStatus) {
  InitFakes f;
  f.exit = ChildExit{false, kExitCommandNotFound, 0, false};
  f.run_error = "cannot run python: No such file or directory (not found on PATH)";
  EXPECT_EQ(run_init(f.request(), f.env()), kExitCommandNotFound);
  EXPECT_EQ(f.errors(), std::vector<std::string>{f.run_error});
  EXPECT_FALSE(f.find("exited"));
}

}  // namespace
}  // namespace gpuenv::flow
