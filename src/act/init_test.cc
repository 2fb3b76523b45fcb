#include "act/init.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>

#include "container_support.h"
#include "process.h"
#include "text_files.h"

namespace gpuenv {
namespace {

Setting setting(const std::string& name, const std::string& value) {
  Setting s;
  s.name = name;
  s.value = value;
  return s;
}

Plan plan_of(std::vector<Setting> settings) {
  Plan p;
  p.settings = std::move(settings);
  return p;
}

using testing::slurp;

class InitFiles : public ::testing::Test {
 protected:
  // A fresh directory under the test's scratch dir, removed after the test.
  std::string temp_dir() {
    std::string dir = scratch_.path() + "/" + std::to_string(++dirs_);
    mkdir(dir.c_str(), 0755);
    return dir;
  }
  testing::ScratchDir scratch_;
  int dirs_ = 0;
};

TEST_F(InitFiles, EnvFileLeavesOutWhatDotenvCannotCarry) {
  Plan p = plan_of({setting("A", "1"), setting("B", "two\nlines"), setting("C", "x=y 'q' $z"),
                    setting("D", "cr\rhere")});
  std::vector<std::string> skipped;
  std::string text = render_env_file(p, &skipped);
  EXPECT_EQ(skipped, (std::vector<std::string>{"B", "D"}));
  EXPECT_NE(text.find("\nA=1\nC=x=y 'q' $z\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("B="), std::string::npos);
  EXPECT_EQ(text[0], '#');  // a comment header, which docker --env-file skips
}

TEST_F(InitFiles, ProfileScriptReadsBackByteForByte) {
  std::string nasty = "it's \"$HOME\" `id` \\ \n second line";
  Plan p = plan_of({setting("GPUENV_T1", nasty), setting("GPUENV_T2", "plain")});
  std::string script, err;
  ASSERT_TRUE(render_profile_script(p, &script, &err)) << err;
  std::string file = scratch_.file("gpuenv.sh", script);
  auto r = testing::run_process({"sh", "-c", ". \"$1\"; printf '%s|%s' \"$GPUENV_T1\" \"$GPUENV_T2\"",
                                 "sh", file});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, nasty + "|plain");
}

TEST_F(InitFiles, ProfileScriptRefusesNul) {
  std::string script, err;
  EXPECT_FALSE(render_profile_script(plan_of({setting("A", std::string("a\0b", 3))}), &script, &err));
  EXPECT_NE(err.find("NUL"), std::string::npos) << err;
}

TEST_F(InitFiles, AtomicWriteCreatesDirAndIgnoresUmask) {
  std::string parent = temp_dir() + "/etc";
  ASSERT_EQ(mkdir(parent.c_str(), 0755), 0);
  std::string dir = parent + "/gpuenv";  // missing: write_file_atomic makes it
  mode_t old = umask(0077);
  std::string err;
  bool ok = write_file_atomic(dir + "/env", "A=1\n", 0644, &err);
  umask(old);
  ASSERT_TRUE(ok) << err;
  EXPECT_EQ(slurp(dir + "/env"), "A=1\n");
  EXPECT_EQ(testing::mode_of(dir + "/env"), 0644u);
  ASSERT_TRUE(write_file_atomic(dir + "/env", "A=2\n", 0600, &err)) << err;
  EXPECT_EQ(slurp(dir + "/env"), "A=2\n");
  EXPECT_EQ(testing::mode_of(dir + "/env"), 0600u);
}

TEST_F(InitFiles, AtomicWriteNamesTheFailingCall) {
  std::string err;
  EXPECT_FALSE(write_file_atomic("/proc/gpuenv-no/such/env", "x", 0644, &err));
  EXPECT_NE(err.find("/proc/gpuenv-no/such"), std::string::npos) << err;
}

TEST_F(InitFiles, WritePlanFilesReportsEachOutcome) {
  std::string dir = temp_dir();
  PlanFiles files{dir + "/etc", "/proc/gpuenv-not-writable"};
  std::vector<LogEvent> events;
  write_plan_files(plan_of({setting("A", "1"), setting("B", "x\ny")}), files,
                   [&](const LogEvent& e) { events.push_back(e); });
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].msg, "skipped");
  EXPECT_EQ(events[0].fields["name"], "B");
  EXPECT_EQ(events[1].msg, "wrote");
  EXPECT_EQ(events[1].fields["path"], dir + "/etc/env");
  EXPECT_EQ(events[2].msg, "write failed");
  EXPECT_EQ(events[2].level, Severity::kWarning);
  EXPECT_EQ(testing::mode_of(dir + "/etc/env"), 0644u);
}

TEST_F(InitFiles, DefaultCommandIsAShell) {
  std::vector<std::string> cmd = default_command();
  ASSERT_EQ(cmd.size(), 1u);
  EXPECT_EQ(access(cmd[0].c_str(), X_OK), 0) << cmd[0];
}

// The user's pip on the cache root: bin first for the user, last for root
// (sshd); what the user set is kept; nothing without a cache root.
TEST(InitPythonUserBase, PointsPipAtTheCacheRoot) {
  std::map<std::string, std::string> env = {{"PATH", "/usr/bin:/bin"}};
  auto get = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  using Env = std::vector<std::pair<std::string, std::string>>;
  PythonUserBase user = python_user_base("/cache/", true, get);
  EXPECT_EQ(user.dir, "/cache/pip");
  EXPECT_EQ(user.env, (Env{{"PYTHONUSERBASE", "/cache/pip"},
                           {"PIP_BREAK_SYSTEM_PACKAGES", "1"},
                           {"PATH", "/cache/pip/bin:/usr/bin:/bin"}}));
  EXPECT_EQ(python_user_base("/cache", false, get).env.back(),
            (std::pair<std::string, std::string>{"PATH", "/usr/bin:/bin:/cache/pip/bin"}));
  env = {{"PIP_BREAK_SYSTEM_PACKAGES", "0"}};
  EXPECT_EQ(python_user_base("/c", true, get).env,
            (Env{{"PYTHONUSERBASE", "/c/pip"}, {"PATH", "/c/pip/bin:/usr/local/bin:/usr/bin:/bin"}}));
  env = {{"PYTHONUSERBASE", "/workspace/py"}, {"PATH", "/usr/bin"}};
  EXPECT_EQ(python_user_base("/cache", true, get).dir, "");
  EXPECT_TRUE(python_user_base("/cache", true, get).env.empty());
  env.clear();
  EXPECT_TRUE(python_user_base("", true, get).env.empty()) << "a refused cache root gets nothing";
}

}  // namespace
}  // namespace gpuenv
