#include "act/serve/serve_common.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "container_support.h"
#include "sys/fs.h"
#include "text_files.h"

namespace gpuenv {
namespace {

void make_exe(const std::string& path) {
  std::string err;
  ASSERT_TRUE(sys::create_exclusive(path, "#!/bin/sh\n", 0755, &err)) << err;
}

class ScopedPath {
 public:
  explicit ScopedPath(const std::string& value) : old_(std::getenv("PATH") ? std::getenv("PATH") : "") {
    setenv("PATH", value.c_str(), 1);
  }
  ~ScopedPath() { setenv("PATH", old_.c_str(), 1); }

 private:
  std::string old_;
};

class ServeCommon : public ::testing::Test {
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

TEST_F(ServeCommon, CreateExclusiveHasTheModeWhateverTheUmask) {
  std::string file = temp_dir() + "/secret";
  mode_t old = umask(0);
  std::string err;
  bool ok = sys::create_exclusive(file, "s3cret", 0600, &err);
  umask(old);
  ASSERT_TRUE(ok) << err;
  EXPECT_EQ(testing::link_mode_of(file), 0600u);
  std::string back;
  ASSERT_TRUE(fs::read_file_nofollow(file, 100, &back, &err)) << err;
  EXPECT_EQ(back, "s3cret");
}

TEST_F(ServeCommon, CreateExclusiveRefusesAnExistingFileOrSymlink) {
  std::string dir = temp_dir(), err;
  ASSERT_TRUE(sys::create_exclusive(dir + "/f", "1", 0600, &err));
  EXPECT_FALSE(sys::create_exclusive(dir + "/f", "2", 0600, &err));
  EXPECT_NE(err.find("open(" + dir + "/f): File exists"), std::string::npos) << err;
  ASSERT_EQ(symlink("/tmp/gpuenv-elsewhere", (dir + "/link").c_str()), 0);
  EXPECT_FALSE(sys::create_exclusive(dir + "/link", "2", 0600, &err));
  EXPECT_NE(access("/tmp/gpuenv-elsewhere", F_OK), 0);
}

TEST_F(ServeCommon, MakeDirsCreatesEachLevelWithTheMode) {
  std::string dir = temp_dir(), err;
  mode_t old = umask(0022);
  bool ok = sys::make_dirs(dir + "/a/b/c", 0700, &err);
  umask(old);
  ASSERT_TRUE(ok) << err;
  EXPECT_EQ(testing::link_mode_of(dir + "/a"), 0700u);
  EXPECT_EQ(testing::link_mode_of(dir + "/a/b/c"), 0700u);
  EXPECT_TRUE(sys::make_dirs(dir + "/a/b/c", 0700, &err)) << "existing dirs are fine";
  EXPECT_FALSE(sys::make_dirs("/proc/gpuenv-no/x", 0755, &err));
}

TEST_F(ServeCommon, FindOnPathTriesNamesInOrderThenDirs) {
  std::string d1 = temp_dir(), d2 = temp_dir();
  make_exe(d2 + "/first");
  make_exe(d1 + "/second");
  std::string err;
  ASSERT_TRUE(sys::create_exclusive(d1 + "/first", "not executable", 0644, &err));
  ScopedPath path(d1 + ":" + d2);
  EXPECT_EQ(find_on_path({"first", "second"}), d2 + "/first");
  EXPECT_EQ(find_on_path({"second", "first"}), d1 + "/second");
  EXPECT_EQ(find_on_path({"third"}), "");
}

TEST_F(ServeCommon, RunProgramReportsTheStatus) {
  std::string err;
  EXPECT_TRUE(run_program({"true"}, &err)) << err;
  EXPECT_FALSE(run_program({"sh", "-c", "exit 4"}, &err));
  EXPECT_EQ(err, "sh exited with status 4");
  EXPECT_FALSE(run_program({"gpuenv-no-such-program"}, &err));
  EXPECT_NE(err.find("posix_spawnp(gpuenv-no-such-program)"), std::string::npos) << err;
}

TEST_F(ServeCommon, ChooseAccountNeverDefaultsToRoot) {
  Account a;
  std::string err;
  if (geteuid() == 0) {
    EXPECT_FALSE(choose_account("", false, &a, &err));
    EXPECT_NE(err.find("--user NAME"), std::string::npos) << err;
    EXPECT_FALSE(choose_account("root", false, &a, &err));
    EXPECT_TRUE(choose_account("", true, &a, &err)) << err;
    EXPECT_EQ(a.uid, 0u);
    EXPECT_FALSE(choose_account("gpuenv-no-such-user", false, &a, &err));
    EXPECT_NE(err.find("no user named gpuenv-no-such-user"), std::string::npos) << err;
  } else {
    ASSERT_TRUE(choose_account("", false, &a, &err)) << err;
    EXPECT_EQ(a.uid, geteuid());
    EXPECT_FALSE(choose_account("root", false, &a, &err));
    EXPECT_NE(err.find("switching users needs root"), std::string::npos) << err;
  }
}

TEST_F(ServeCommon, LookupAccount) {
  Account a;
  std::string err;
  ASSERT_TRUE(lookup_account("root", &a, &err)) << err;
  EXPECT_EQ(a.uid, 0u);
  EXPECT_FALSE(a.home.empty());
  EXPECT_FALSE(a.shell.empty());
}

}  // namespace
}  // namespace gpuenv
