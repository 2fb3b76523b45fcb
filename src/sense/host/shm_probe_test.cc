// sense_shm_writable: a file is created and removed in the directory, or the
// reason it cannot be is recorded (doctor's shm check reads it).
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "sense/sense.h"

namespace gpuenv {
namespace {

namespace stdfs = std::filesystem;

std::string temp_dir() {
  std::string tmpl = (stdfs::temp_directory_path() / "gpuenv-shm-XXXXXX").string();
  return mkdtemp(tmpl.data());
}

TEST(ShmProbe, AWritableDirectoryLeavesNothingBehind) {
  std::string dir = temp_dir();
  Host h;
  h.shm_error = "stale";
  sense_shm_writable(dir, &h);
  EXPECT_EQ(h.shm_writable, true);
  EXPECT_EQ(h.shm_error, std::nullopt);
  EXPECT_TRUE(stdfs::is_empty(dir));
  stdfs::remove_all(dir);
}

TEST(ShmProbe, APlainFileIsUnusable) {
  std::string dir = temp_dir(), file = dir + "/shm";
  std::ofstream(file) << "not a directory";
  Host h;
  sense_shm_writable(file, &h);
  EXPECT_EQ(h.shm_writable, false);
  ASSERT_TRUE(h.shm_error);
  EXPECT_NE(h.shm_error->find("create a file in " + file), std::string::npos) << *h.shm_error;
  EXPECT_NE(h.shm_error->find(std::strerror(ENOTDIR)), std::string::npos) << *h.shm_error;
  stdfs::remove_all(dir);
}

TEST(ShmProbe, AMissingDirectoryIsUnusable) {
  Host h;
  sense_shm_writable("/nonexistent-gpuenv-shm", &h);
  EXPECT_EQ(h.shm_writable, false);
  EXPECT_NE(h.shm_error.value_or("").find(std::strerror(ENOENT)), std::string::npos);
}

// In a child with its own mount namespace (a user namespace too when not
// root), a read-only tmpfs: open(O_CREAT) fails with EROFS, as shm_open does
// in a container started with a read-only /dev/shm.
bool in_private_mounts() {
  if (geteuid() == 0) return unshare(CLONE_NEWNS) == 0;
  uid_t uid = geteuid();
  gid_t gid = getegid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return false;
  std::ofstream("/proc/self/setgroups") << "deny";
  std::ofstream("/proc/self/uid_map") << "0 " << uid << " 1";
  std::ofstream("/proc/self/gid_map") << "0 " << gid << " 1";
  return true;
}

TEST(ShmProbe, AReadOnlyTmpfsIsUnusable) {
  std::string dir = temp_dir();
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    std::string out = "skip";
    if (in_private_mounts() && mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
        mount("tmpfs", dir.c_str(), "tmpfs", MS_RDONLY, "size=1m") == 0) {
      Host h;
      sense_shm_writable(dir, &h);
      out = (h.shm_writable == false ? "unusable: " : "usable: ") + h.shm_error.value_or("");
    }
    (void)!write(fds[1], out.data(), out.size());
    _exit(0);
  }
  close(fds[1]);
  std::string got;
  char buf[256];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) got.append(buf, n);
  close(fds[0]);
  waitpid(pid, nullptr, 0);
  stdfs::remove_all(dir);
  if (got == "skip") GTEST_SKIP() << "no mount namespace here (unshare or mount refused)";
  EXPECT_EQ(got, "unusable: create a file in " + dir + ": " + std::strerror(EROFS));
}

}  // namespace
}  // namespace gpuenv
