// The one safe-directory rule: links and directories another user controls
// are refused wherever they are on the way; sticky directories pass unless
// sshd's rule is asked for.
#include "sys/safe_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "process.h"
#include "text_files.h"

namespace gpuenv::sys {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kNobodyUid = 65534;

std::string safe_temp_dir(mode_t mode = 0700) { return testing::make_temp_dir("gpuenv-safe", mode); }

using testing::contains;

std::string judge(const std::string& dir, Sticky sticky = Sticky::kTrusted) {
  return unsafe_dir(dir, sticky, "ELSEWHERE");
}

TEST(SafeDir, PrivateAndMissingDirectoriesPass) {
  std::string dir = safe_temp_dir(0755);
  EXPECT_EQ(judge(dir), "");
  EXPECT_EQ(judge(dir + "/a/b/c"), "");
  EXPECT_EQ(judge(""), "");
  EXPECT_EQ(judge("/"), "");
  fs::remove_all(dir);
}

TEST(SafeDir, StickyPassesUnlessSshdsRuleIsAsked) {
  std::string dir = safe_temp_dir(01777);
  EXPECT_EQ(judge(dir + "/x"), "");
  std::string why = judge(dir + "/x", Sticky::kRefused);
  // /tmp itself is the first sticky directory on the way.
  EXPECT_TRUE(contains(why, " is writable by its group or by others (sshd's StrictModes refuses that, sticky")) << why;
  EXPECT_TRUE(contains(why, "ELSEWHERE")) << why;
  fs::remove_all(dir);
}

TEST(SafeDir, AWritableDirectoryAnywhereOnTheWayIsRefused) {
  std::string dir = safe_temp_dir(0777), err;
  ASSERT_EQ(mkdir((dir + "/inner").c_str(), 0700), 0);
  // The old store rule judged only the nearest directory (inner, 0700).
  std::string why = judge(dir + "/inner/x");
  EXPECT_TRUE(contains(why, dir + " is writable by everyone without the sticky bit")) << why;
  EXPECT_TRUE(contains(why, "chmod go-w " + dir)) << why;
  fs::remove_all(dir);
}

TEST(SafeDir, ALinkIsFollowedAndItsTargetJudged) {
  std::string dir = safe_temp_dir(0755), open = safe_temp_dir(0777);
  ASSERT_EQ(mkdir((open + "/in").c_str(), 0700), 0);
  fs::create_directory_symlink(open + "/in", dir + "/abs");
  fs::create_directory_symlink("../" + fs::path(open).filename().string() + "/in", dir + "/rel");
  EXPECT_TRUE(contains(judge(dir + "/abs/x"), open + " is writable by everyone")) << judge(dir + "/abs/x");
  EXPECT_TRUE(contains(judge(dir + "/rel"), open + " is writable by everyone")) << judge(dir + "/rel");
  chmod(open.c_str(), 0755);
  EXPECT_EQ(judge(dir + "/abs/x"), "");
  EXPECT_EQ(judge(dir + "/rel/x"), "");
  fs::remove_all(dir);
  fs::remove_all(open);
}

TEST(SafeDir, ALoopOfLinksEnds) {
  std::string dir = safe_temp_dir(0755);
  fs::create_directory_symlink(dir + "/b", dir + "/a");
  fs::create_directory_symlink(dir + "/a", dir + "/b");
  EXPECT_TRUE(contains(judge(dir + "/a/x"), "Too many levels of symbolic links")) << judge(dir + "/a/x");
  fs::remove_all(dir);
}

TEST(SafeDir, AFileOnTheWayIsNoDirectory) {
  std::string dir = safe_temp_dir(0755);
  fs::create_directory(dir + "/d");
  { FILE* f = fopen((dir + "/f").c_str(), "w"); fclose(f); }
  EXPECT_EQ(judge(dir + "/f/x"), dir + "/f is not a directory");
  fs::remove_all(dir);
}

TEST(SafeDir, ARelativePathStartsAtTheWorkingDirectory) {
  std::string dir = safe_temp_dir(0777), here = fs::current_path().string();
  ASSERT_EQ(chdir(dir.c_str()), 0);
  std::string why = judge("sub/dir");
  ASSERT_EQ(chdir(here.c_str()), 0);
  EXPECT_TRUE(contains(why, dir + " is writable by everyone")) << why;
  fs::remove_all(dir);
}

// Another user, as the store's tests simulate one: root gives them a directory or a link.
TEST(SafeDir, WhatAnotherUserOwnsIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a directory to another user";
  std::string dir = safe_temp_dir(0755), root_only = safe_temp_dir(0700);
  ASSERT_EQ(mkdir((dir + "/up").c_str(), 0755), 0);
  ASSERT_EQ(chown((dir + "/up").c_str(), kNobodyUid, kNobodyUid), 0);
  std::string why = judge(dir + "/up/features.d");
  EXPECT_TRUE(contains(why, dir + "/up is owned by uid 65534")) << why;
  // up/features.d -> /root-only, planted by the other user in a sticky directory.
  ASSERT_EQ(chown((dir + "/up").c_str(), 0, 0), 0);
  ASSERT_EQ(chmod((dir + "/up").c_str(), 01777), 0);
  fs::create_directory_symlink(root_only, dir + "/up/features.d");
  ASSERT_EQ(lchown((dir + "/up/features.d").c_str(), kNobodyUid, kNobodyUid), 0);
  why = judge(dir + "/up/features.d");
  EXPECT_TRUE(contains(why, dir + "/up/features.d is a symbolic link owned by uid 65534")) << why;
  fs::remove_all(dir);
  fs::remove_all(root_only);
}

}  // namespace
}  // namespace gpuenv::sys
