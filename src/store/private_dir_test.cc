// The store in a directory another user can write to: planted links are not
// followed, unsafe directories are refused with the fix, FIFOs do not hang.
#include "store/private_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "store/store.h"
#include "process.h"
#include "text_files.h"

namespace gpuenv::store {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kNobody = 65534;

std::string temp_dir(mode_t mode = 0700) { return testing::make_temp_dir("gpuenv-private", mode); }

using testing::contains;

TEST(PrivateDir, APlantedLinkIsNeitherFollowedNorCreated) {
  std::string dir = temp_dir(01777), target = dir + "/target", link = dir + "/new.db", err;
  fs::create_symlink(target, link);
  EXPECT_FALSE(Store::open(link, &err));
  EXPECT_TRUE(contains(err, link + " is a symbolic link")) << err;
  err.clear();
  EXPECT_FALSE(Store::open_existing(link, &err));
  EXPECT_TRUE(contains(err, "symbolic link")) << err;
  EXPECT_FALSE(fs::exists(target));
  fs::remove_all(dir);
}

TEST(PrivateDir, APlantedLinkToAnExistingFileLeavesItAlone) {
  std::string dir = temp_dir(01777), target = dir + "/precious", link = dir + "/new.db", err;
  std::ofstream(target) << "precious";
  fs::create_symlink(target, link);
  EXPECT_FALSE(Store::open(link, &err));
  std::ifstream in(target);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, "precious");
  EXPECT_FALSE(fs::exists(target + "-wal"));
  fs::remove_all(dir);
}

TEST(PrivateDir, WritableByOthersWithoutTheStickyBitIsRefused) {
  for (mode_t mode : {0777, 0770, 0730}) {
    std::string dir = temp_dir(mode), err;
    EXPECT_FALSE(Store::open(dir + "/g.db", &err)) << std::oct << mode;
    EXPECT_TRUE(contains(err, dir + " is writable by")) << err;
    EXPECT_TRUE(contains(err, "chmod go-w " + dir)) << err;
    EXPECT_FALSE(fs::exists(dir + "/g.db"));
    err.clear();
    EXPECT_FALSE(Store::open_existing(dir + "/g.db", &err));
    EXPECT_TRUE(contains(err, "without the sticky bit")) << err;
    // A missing directory under it is judged by it.
    EXPECT_TRUE(contains(unsafe_dir(dir + "/a/b"), dir + " is writable by"));
    fs::remove_all(dir);
  }
}

TEST(PrivateDir, StickyOrPrivateIsFine) {
  for (mode_t mode : {01777, 0700, 0755}) {
    std::string dir = temp_dir(mode), err;
    EXPECT_EQ(unsafe_dir(dir), "") << std::oct << mode;
    EXPECT_TRUE(Store::open(dir + "/g.db", &err)) << err;
    fs::remove_all(dir);
  }
}

TEST(PrivateDir, OwnedByAnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a directory to another user";
  std::string dir = temp_dir(0755), err;
  ASSERT_EQ(chown(dir.c_str(), kNobody, kNobody), 0);
  EXPECT_FALSE(Store::open(dir + "/g.db", &err));
  EXPECT_TRUE(contains(err, dir + " is owned by uid 65534")) << err;
  EXPECT_TRUE(contains(err, "--cache-root DIR")) << err;
  EXPECT_FALSE(fs::exists(dir + "/g.db"));
  fs::remove_all(dir);
}

TEST(PrivateDir, ALinkOnTheWayOwnedByAnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a link to another user";
  std::string dir = temp_dir(01777), elsewhere = temp_dir(), err;
  fs::create_directory_symlink(elsewhere, dir + "/gpuenv");
  ASSERT_EQ(lchown((dir + "/gpuenv").c_str(), kNobody, kNobody), 0);
  EXPECT_FALSE(Store::open(dir + "/gpuenv/g.db", &err));
  EXPECT_TRUE(contains(err, dir + "/gpuenv is a symbolic link owned by uid 65534")) << err;
  EXPECT_FALSE(fs::exists(elsewhere + "/g.db"));
  fs::remove_all(dir);
  fs::remove_all(elsewhere);
}

TEST(PrivateDir, OwnLinksOnTheWayAreFollowed) {
  std::string dir = temp_dir(), real = temp_dir(), err;
  fs::create_directory_symlink(real, dir + "/cache");  // ~/.cache on a volume
  EXPECT_TRUE(Store::open(dir + "/cache/g.db", &err)) << err;
  EXPECT_TRUE(fs::exists(real + "/g.db"));
  fs::remove_all(dir);
  fs::remove_all(real);
}

TEST(PrivateDir, MissingDirectoriesAre0700AndTheFile0600) {
  mode_t old = umask(0);
  std::string dir = temp_dir(), err;
  auto db = Store::open(dir + "/a/b/g.db", &err);
  umask(old);
  ASSERT_TRUE(db) << err;
  EXPECT_EQ(testing::link_mode_of(dir + "/a"), 0700u);
  EXPECT_EQ(testing::link_mode_of(dir + "/a/b"), 0700u);
  EXPECT_EQ(testing::link_mode_of(dir + "/a/b/g.db"), 0600u);
  fs::remove_all(dir);
}

// Opening the store must come back, not wait for a writer, when the store
// is a FIFO: the child would be killed by the alarm.
TEST(PrivateDir, AFifoIsRefusedWithoutHanging) {
  std::string dir = temp_dir(), fifo = dir + "/f.db";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (bool create : {false, true}) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      alarm(5);
      std::string e;
      bool refused = !(create ? Store::open(fifo, &e) : Store::open_existing(fifo, &e));
      _exit(refused && contains(e, fifo + " is not a regular file") ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status)) << "hung (killed by signal " << WTERMSIG(status) << "), create=" << create;
    EXPECT_EQ(WEXITSTATUS(status), 0) << "create=" << create;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gpuenv::store
