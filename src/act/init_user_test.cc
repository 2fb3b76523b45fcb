#include "act/init_user.h"

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace gpuenv {
namespace {

namespace fs = std::filesystem;
using Kind = InitUser::Kind;

// A non-root account every Debian system has.
const char* kUser = "nobody";

InitUser chosen(const std::vector<std::string>& argv, uid_t euid, const std::string& user,
                const std::string& as_root) {
  InitUser u;
  std::string err;
  EXPECT_TRUE(choose_init_user(argv, euid, user, as_root, &u, &err)) << err;
  return u;
}

TEST(InitUser, WhoRunsTheCommand) {
  struct Row {
    std::vector<std::string> argv;
    uid_t euid;
    std::string user, as_root;
    Kind want;
  } rows[] = {
      {{"python3", "train.py"}, 1000, kUser, "", Kind::kUnchanged},
      {{"python3", "train.py"}, 0, kUser, "", Kind::kDrop},
      {{"gpuenv", "serve", "jupyter"}, 0, kUser, "", Kind::kDrop},
      {{"/usr/local/bin/gpuenv", "serve", "ssh"}, 0, kUser, "", Kind::kSshd},
      {{"python3", "train.py"}, 0, kUser, "1", Kind::kRoot},
      {{"gpuenv", "serve", "ssh"}, 0, kUser, "1", Kind::kRoot},
      {{"python3"}, 0, kUser, "0", Kind::kDrop},
      {{"python3"}, 0, "", "", Kind::kNoUser},
      {{}, 0, kUser, "", Kind::kDrop},
  };
  for (const auto& r : rows) {
    InitUser u = chosen(r.argv, r.euid, r.user, r.as_root);
    EXPECT_EQ(u.kind, r.want) << (r.argv.empty() ? "" : r.argv[0]) << " euid " << r.euid << " " << r.as_root;
    if (u.kind == Kind::kDrop || u.kind == Kind::kSshd) {
      EXPECT_EQ(u.account.name, kUser);
      EXPECT_EQ(u.account.uid, getpwnam(kUser)->pw_uid);
    }
  }
}

TEST(InitUser, TheLogSaysWhenTheCommandKeepsRoot) {
  LogEvent root = init_user_event(chosen({"python3"}, 0, kUser, "1"));
  EXPECT_EQ(root.level, Severity::kWarning);
  EXPECT_NE(root.text.find("GPUENV_RUN_AS_ROOT=1"), std::string::npos) << root.text;
  EXPECT_EQ(root.fields["uid"], 0);
  LogEvent drop = init_user_event(chosen({"python3"}, 0, kUser, ""));
  EXPECT_EQ(drop.level, Severity::kInfo);
  EXPECT_EQ(drop.fields["user"], kUser);
}

TEST(InitUser, AnUnusableUserIsAnErrorWithTheFix) {
  InitUser u;
  std::string err;
  EXPECT_FALSE(choose_init_user({"python3"}, 0, "no-such-user-gpuenv", "", &u, &err));
  EXPECT_NE(err.find("no-such-user-gpuenv"), std::string::npos) << err;
  EXPECT_NE(err.find("GPUENV_RUN_AS_ROOT=1"), std::string::npos) << err;
  err.clear();
  EXPECT_FALSE(choose_init_user({"python3"}, 0, "root", "", &u, &err));
  EXPECT_NE(err.find("is root"), std::string::npos) << err;
}

class InitCacheRoot : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "handing files over needs root";
    char tmpl[] = "/tmp/gpuenv-cache-root-XXXXXX";
    dir_ = mkdtemp(tmpl);
    account_.name = kUser;
    account_.uid = getpwnam(kUser)->pw_uid;
    account_.gid = getpwnam(kUser)->pw_gid;
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  uid_t owner(const std::string& p) {
    struct stat st;
    EXPECT_EQ(lstat(p.c_str(), &st), 0) << p;
    return st.st_uid;
  }
  std::string dir_;
  Account account_;
};

TEST_F(InitCacheRoot, WhatRootOwnsBecomesTheUsersWithoutFollowingSymlinks) {
  std::string root = dir_ + "/cache";
  fs::create_directories(root + "/triton/sm90");
  std::ofstream(root + "/triton/sm90/kernel") << "x";
  std::ofstream(dir_ + "/outside") << "root's";
  fs::create_symlink(dir_ + "/outside", root + "/triton/link");
  fs::create_directory_symlink(dir_, root + "/up");
  std::ofstream(root + "/theirs") << "y";
  ASSERT_EQ(chown((root + "/theirs").c_str(), 4242, 4242), 0);

  std::vector<std::string> problems;
  size_t handed = hand_cache_root(root, account_, &problems);
  EXPECT_TRUE(problems.empty()) << problems.front();
  EXPECT_EQ(handed, 6u);  // cache, triton, sm90, kernel, link, up
  for (const char* p : {"", "/triton", "/triton/sm90", "/triton/sm90/kernel", "/triton/link", "/up"})
    EXPECT_EQ(owner(root + p), account_.uid) << p;
  EXPECT_EQ(owner(dir_ + "/outside"), 0u) << "a symlink's target is not the cache's";
  EXPECT_EQ(owner(dir_), 0u) << "a symlink to a directory is not descended";
  EXPECT_EQ(owner(root + "/theirs"), 4242u) << "only what root owns is handed over";
}

TEST_F(InitCacheRoot, AMissingRootIsMadeAndASystemDirectoryIsRefused) {
  std::vector<std::string> problems;
  EXPECT_EQ(hand_cache_root(dir_ + "/new/cache", account_, &problems), 1u);
  EXPECT_EQ(owner(dir_ + "/new/cache"), account_.uid);
  for (const char* sys : {"/", "/usr", "/etc/", "/usr/lib", "relative"}) {
    problems.clear();
    EXPECT_EQ(hand_cache_root(sys, account_, &problems), 0u) << sys;
    ASSERT_EQ(problems.size(), 1u) << sys;
    EXPECT_NE(problems[0].find("system directory"), std::string::npos) << problems[0];
  }
  EXPECT_EQ(owner("/usr"), 0u);
}

TEST(InitUser, TheCacheDirectoriesAreThePlansPathsUnderTheRoot) {
  Plan plan;
  for (auto [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"TRITON_CACHE_DIR", "/cache/triton/sm90"},
           {"PYTHONPYCACHEPREFIX", "/cache/bytecode/cpython-311"},
           {"OMP_NUM_THREADS", "8"},
           {"OTHER", "/cachex/y"},
           {"CUDA_CACHE_PATH", "/elsewhere/cuda"}}) {
    Setting s;
    s.name = name;
    s.value = value;
    plan.settings.push_back(s);
  }
  EXPECT_EQ(cache_dirs_in_plan(plan, "/cache"),
            (std::vector<std::string>{"/cache/triton/sm90", "/cache/bytecode/cpython-311"}));
  EXPECT_EQ(cache_dirs_in_plan(plan, "/cache/"), cache_dirs_in_plan(plan, "/cache"));
  EXPECT_TRUE(cache_dirs_in_plan(plan, "").empty());
}

}  // namespace
}  // namespace gpuenv
