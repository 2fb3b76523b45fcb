// The careful writes: atomic replacement of regular files only, stdout
// written through, nothing created where another user steers.
#include "sys/file_write.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "process.h"
#include "text_files.h"

namespace gpuenv::sys {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kNobody = 65534;

std::string temp_dir(mode_t mode = 0755) { return testing::make_temp_dir("gpuenv-write", mode); }

using testing::slurp;

using testing::contains;

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(FileWrite, ReplacesARegularFileAtomically) {
  std::string dir = temp_dir(), path = dir + "/out", err;
  ASSERT_TRUE(write_file_atomic(path, "one", 0644, &err)) << err;
  ASSERT_TRUE(write_file_atomic(path, "two", 0600, &err)) << err;
  EXPECT_EQ(slurp(path), "two");
  EXPECT_EQ(entries(dir), std::vector<std::string>{"out"});  // no temporary left
  fs::remove_all(dir);
}

// Before: rename(2) turned each of these into a regular 0644 file.
TEST(FileWrite, RefusesATargetThatIsNoRegularFile) {
  std::string dir = temp_dir(), err;
  ASSERT_EQ(mkfifo((dir + "/fifo").c_str(), 0600), 0);
  fs::create_symlink("/dev/null", dir + "/link");
  fs::create_directory(dir + "/dir");
  struct Case { std::string name, kind; };
  std::vector<Case> cases = {{"fifo", "a FIFO"}, {"link", "a symbolic link"}, {"dir", "a directory"}};
  if (geteuid() == 0 && mknod((dir + "/null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0)
    cases.push_back({"null", "a character device"});
  for (const auto& c : cases) {
    std::string path = dir + "/" + c.name;
    struct stat before {}, after {};
    ASSERT_EQ(lstat(path.c_str(), &before), 0);
    err.clear();
    EXPECT_FALSE(write_file_atomic(path, "x", 0644, &err)) << c.name;
    EXPECT_TRUE(contains(err, path + " is " + c.kind + ": gpuenv replaces only regular files")) << err;
    ASSERT_EQ(lstat(path.c_str(), &after), 0);
    EXPECT_EQ(before.st_mode, after.st_mode) << c.name;
    EXPECT_EQ(before.st_ino, after.st_ino) << c.name;
  }
  EXPECT_EQ(entries(dir).size(), cases.size());  // no temporary left
  fs::remove_all(dir);
}

TEST(FileWrite, StdoutIsWrittenThrough) {
  EXPECT_TRUE(is_stdout("-"));
  EXPECT_TRUE(is_stdout("/dev/stdout"));
  EXPECT_FALSE(is_stdout("/dev/stderr"));
  std::string dir = temp_dir(), path = dir + "/captured", err;
  fflush(stdout);
  int saved = dup(1), fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  dup2(fd, 1);
  bool ok = write_output("-", "to stdout\n", 0644, &err) && write_output("/dev/stdout", "again\n", 0644, &err);
  dup2(saved, 1);
  close(fd);
  close(saved);
  EXPECT_TRUE(ok) << err;
  EXPECT_EQ(slurp(path), "to stdout\nagain\n");
  fs::remove_all(dir);
}

TEST(FileWrite, AFullStdoutIsAnError) {
  fflush(stdout);
  int saved = dup(1), fd = open("/dev/full", O_WRONLY);
  if (fd < 0) GTEST_SKIP() << "no /dev/full";
  dup2(fd, 1);
  std::string err;
  bool ok = write_output("-", "lost\n", 0644, &err);
  clearerr(stdout);
  dup2(saved, 1);
  close(fd);
  close(saved);
  EXPECT_FALSE(ok);
  EXPECT_EQ(err, "write(stdout): No space left on device");
}

TEST(FileWrite, RefusesADirectoryAnotherUserCouldSteer) {
  std::string dir = temp_dir(0777), err;
  EXPECT_FALSE(write_file_atomic(dir + "/out", "x", 0644, &err));
  EXPECT_TRUE(contains(err, dir + " is writable by everyone without the sticky bit")) << err;
  EXPECT_FALSE(write_file_atomic(dir + "/sub/out", "x", 0644, &err));
  EXPECT_TRUE(entries(dir).empty());
  fs::remove_all(dir);
}

// up/features.d -> a root-only directory, planted by another user.
TEST(FileWrite, APlantedDirectoryLinkIsNotFollowedAsRoot) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a link to another user";
  std::string dir = temp_dir(01777), root_only = temp_dir(0700), err;
  std::ofstream(root_only + "/gpuenv") << "precious";
  fs::create_directory_symlink(root_only, dir + "/features.d");
  ASSERT_EQ(lchown((dir + "/features.d").c_str(), kNobody, kNobody), 0);
  EXPECT_FALSE(write_file_atomic(dir + "/features.d/gpuenv", "labels", 0644, &err));
  EXPECT_TRUE(contains(err, dir + "/features.d is a symbolic link owned by uid 65534")) << err;
  EXPECT_EQ(slurp(root_only + "/gpuenv"), "precious");
  fs::remove_all(dir);
  fs::remove_all(root_only);
}

TEST(FileWrite, CreateExclusiveNeverFollowsOrReplaces) {
  std::string dir = temp_dir(), err;
  ASSERT_TRUE(create_exclusive(dir + "/f", "1", 0600, &err)) << err;
  EXPECT_FALSE(create_exclusive(dir + "/f", "2", 0600, &err));
  EXPECT_EQ(slurp(dir + "/f"), "1");
  fs::create_symlink(dir + "/target", dir + "/link");
  EXPECT_FALSE(create_exclusive(dir + "/link", "2", 0600, &err));
  EXPECT_FALSE(fs::exists(dir + "/target"));
  fs::remove_all(dir);
}

TEST(FileWrite, MakeDirGivesTheExactModeAndMakeDirsEveryLevel) {
  std::string dir = temp_dir(), err;
  mode_t old = umask(077);
  EXPECT_TRUE(make_dir(dir + "/one", 0755, &err)) << err;
  EXPECT_TRUE(make_dir(dir + "/one", 0700, &err)) << err;  // exists: fine, left as it is
  EXPECT_FALSE(make_dir(dir + "/no/such", 0755, &err));  // one level only
  EXPECT_EQ(err, "mkdir(" + dir + "/no/such): No such file or directory");
  EXPECT_TRUE(make_dirs(dir + "/a/b/c", 0750, &err)) << err;
  umask(old);
  struct stat st;
  ASSERT_EQ(stat((dir + "/one").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  for (const char* level : {"/a", "/a/b", "/a/b/c"}) {
    ASSERT_EQ(stat((dir + level).c_str(), &st), 0) << level;
    EXPECT_EQ(st.st_mode & 07777, 0750u) << level;
  }
  EXPECT_TRUE(write_file_atomic(dir + "/new/file", "x", 0644, &err)) << err;  // makes its directory
  EXPECT_FALSE(write_file_atomic(dir + "/x/y/file", "x", 0644, &err));     // but not its parents
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gpuenv::sys
