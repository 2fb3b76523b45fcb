#include "sys/fs.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "process.h"

namespace gpuenv::fs {
namespace {

// A FIFO with no writer: a plain open() for reading blocks until one comes.
std::string make_fifo() {
  std::string path = testing::write_temp_file("fifo", "");
  unlink(path.c_str());
  EXPECT_EQ(mkfifo(path.c_str(), 0600), 0);
  return path;
}

TEST(Fs, ErrnoTextNamesTheCallItsArgumentAndTheError) {
  EXPECT_EQ(errno_text("open", "/x", ENOENT), "open(/x): No such file or directory");
  EXPECT_EQ(errno_text("sched_getaffinity", EPERM), "sched_getaffinity: Operation not permitted");
  errno = EACCES;
  EXPECT_EQ(errno_text("mkdir", "/y"), "mkdir(/y): Permission denied");
}

TEST(Fs, WriteAllWritesEverythingOrSaysItFailed) {
  std::string path = testing::write_temp_file("write_all", ""), text, err;
  std::string big(1 << 20, 'x');
  int fd = open(path.c_str(), O_WRONLY | O_TRUNC);
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(write_all(fd, big));
  close(fd);
  ASSERT_TRUE(read_file(path, &text, &err)) << err;
  EXPECT_EQ(text, big);
  fd = open(path.c_str(), O_RDONLY);
  EXPECT_FALSE(write_all(fd, "y"));  // not open for writing
  EXPECT_EQ(errno, EBADF);
  close(fd);
  unlink(path.c_str());
}

TEST(Fs, OpenRegularRefusesWhatIsNotAFileWithoutBlocking) {
  std::string fifo = make_fifo(), err, text;
  EXPECT_EQ(open_regular(fifo, &err), -1);
  EXPECT_EQ(err, fifo + ": not a regular file (a FIFO)");
  EXPECT_FALSE(read_file(fifo, &text, &err));
  EXPECT_EQ(err, fifo + ": not a regular file (a FIFO)");
  EXPECT_FALSE(read_head(fifo, 16, &text, &err));
  EXPECT_FALSE(read_file("/dev/zero", &text, &err));  // would never end
  EXPECT_EQ(err, "/dev/zero: not a regular file (a character device)");
  EXPECT_FALSE(read_file("/tmp", &text, &err));
  EXPECT_EQ(err, "/tmp: not a regular file (a directory)");
  EXPECT_FALSE(read_file("/nonexistent/x", &text, &err));
  EXPECT_EQ(err, "open(/nonexistent/x): No such file or directory");
}

TEST(Fs, OpenRegularGivesTheSizeAndReadHeadTheStart) {
  std::string path = testing::write_temp_file("f", "#!/bin/sh\necho hi\n"), err, text;
  std::uint64_t size = 0;
  int fd = open_regular(path, &err, &size);
  ASSERT_GE(fd, 0) << err;
  EXPECT_EQ(size, 18u);
  EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
  close(fd);
  ASSERT_TRUE(read_head(path, 9, &text, &err)) << err;
  EXPECT_EQ(text, "#!/bin/sh");
  ASSERT_TRUE(read_file(path, &text, &err)) << err;
  EXPECT_EQ(text, "#!/bin/sh\necho hi\n");
}

TEST(Fs, ReadFileRefusesWhatIsOverTheLimit) {
  std::string path = testing::write_temp_file("big", ""), text, err;
  ASSERT_EQ(truncate(path.c_str(), kMaxFileBytes + 1), 0);
  EXPECT_FALSE(read_file(path, &text, &err));
  EXPECT_EQ(err, "read(" + path + "): file larger than " + std::to_string(kMaxFileBytes) + " bytes");
  EXPECT_TRUE(text.empty());
  ASSERT_EQ(truncate(path.c_str(), kMaxFileBytes), 0);
  EXPECT_TRUE(read_file(path, &text, &err)) << err;
}

// The bench plugin and the kubelet client are found the same way.
TEST(OwnFileCandidates, TheVariableAloneElseBesideThenTheInstalledPrefix) {
  EXPECT_EQ(own_file_candidates("gpuenv-kubelet", "/opt/k", "/usr/local/bin/gpuenv"),
            (std::vector<std::string>{"/opt/k"}));
  EXPECT_EQ(own_file_candidates("gpuenv-kubelet", "", "/usr/local/bin/gpuenv"),
            (std::vector<std::string>{"/usr/local/bin/gpuenv-kubelet", "/usr/local/bin/../lib/gpuenv/gpuenv-kubelet"}));
  EXPECT_EQ(own_file_candidates("libgpuenv-bench.so", "", ""), (std::vector<std::string>{"libgpuenv-bench.so"}));
}

}  // namespace
}  // namespace gpuenv::fs
