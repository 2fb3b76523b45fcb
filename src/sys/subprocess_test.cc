#include "sys/subprocess.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "process.h"

namespace gpuenv::sys {
namespace {

using Dirs = std::vector<std::string>;

// The status a child ends with after sys::exec(argv) failed there.
int exec_in_child(const std::vector<std::string>& argv) {
  pid_t pid = fork();
  if (pid == 0) _exit(exec_status(exec(argv)));
  return wait_for(pid);
}

std::string make_file(const std::string& name, const std::string& text, mode_t mode) {
  std::string path = testing::write_temp_file(name, text);
  EXPECT_EQ(chmod(path.c_str(), mode), 0);
  return path;
}

TEST(Process, ExecOfAMissingProgramGives127) {
  int status = exec_in_child({"gpuenv-no-such-program"});
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), kExitCommandNotFound);
  EXPECT_EQ(WEXITSTATUS(exec_in_child({"/no/such/dir/prog"})), 127);
}

TEST(Process, ExecOfANonExecutableFileGives126) {
  std::string file = make_file("not-executable", "#!/bin/sh\nexit 0\n", 0644);
  int status = exec_in_child({file});
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), kExitCannotExecute);
  EXPECT_EQ(WEXITSTATUS(exec_in_child({"/tmp"})), 126);  // a directory
}

TEST(Process, ExecRunsTheProgramWhenItCan) {
  EXPECT_EQ(WEXITSTATUS(exec_in_child({"sh", "-c", "exit 7"})), 7);
  EXPECT_EQ(exec({}), ENOENT);
}

TEST(Process, ExecStatusIsTheShellsConvention) {
  EXPECT_EQ(exec_status(ENOENT), 127);
  EXPECT_EQ(exec_status(EACCES), 126);
  EXPECT_EQ(exec_status(ENOEXEC), 126);
  EXPECT_EQ(exec_status(ENOTDIR), 126);
}

TEST(Process, CArgvEndsInNull) {
  std::vector<std::string> argv = {"a", "b c"};
  std::vector<char*> c = c_argv(argv);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_STREQ(c[0], "a");
  EXPECT_STREQ(c[1], "b c");
  EXPECT_EQ(c[2], nullptr);
  EXPECT_EQ(c_argv({}), (std::vector<char*>{nullptr}));
}

TEST(Process, PathEntriesReadEmptyOnesAsTheCurrentDirectory) {
  EXPECT_EQ(path_entries(""), (Dirs{"."}));
  EXPECT_EQ(path_entries("/bin"), (Dirs{"/bin"}));
  EXPECT_EQ(path_entries("/a::/b"), (Dirs{"/a", ".", "/b"}));
  EXPECT_EQ(path_entries(":/a:"), (Dirs{".", "/a", "."}));
  EXPECT_EQ(path_entries("rel/bin:/x"), (Dirs{"rel/bin", "/x"}));
}

TEST(Process, FindOnPathTakesTheFirstAcceptedEntry) {
  std::vector<std::string> asked;
  auto accept = [&](const std::string& p) {
    asked.push_back(p);
    return p == "/b/prog" || p == "/c/prog";
  };
  EXPECT_EQ(find_on_path("prog", "/a:/b:/c", accept), "/b/prog");
  EXPECT_EQ(asked, (Dirs{"/a/prog", "/b/prog"}));
  asked.clear();
  EXPECT_EQ(find_on_path("prog", "::/a", accept), std::nullopt);
  EXPECT_EQ(asked, (Dirs{"./prog", "./prog", "/a/prog"}));
}

TEST(Process, FindOnPathWithExecutableFiles) {
  std::string exe = make_file("exe", "#!/bin/sh\n", 0755);
  std::string plain = make_file("plain", "x", 0644);
  std::string dir = exe.substr(0, exe.rfind('/'));
  std::string name = exe.substr(exe.rfind('/') + 1);
  EXPECT_EQ(find_on_path(name, "/gpuenv-missing::" + dir, is_executable_file), dir + "/" + name);
  EXPECT_EQ(find_on_path(plain.substr(plain.rfind('/') + 1), dir, is_executable_file), std::nullopt);
  EXPECT_TRUE(is_regular_file(plain));
  EXPECT_FALSE(is_executable_file(plain));
  EXPECT_FALSE(is_regular_file("/tmp"));
  EXPECT_FALSE(is_executable_file("/tmp"));
}

TEST(Process, SearchPathIsPathOrTheDefault) {
  const char* old = std::getenv("PATH");
  std::string saved = old ? old : "";
  setenv("PATH", "/x:/y", 1);
  EXPECT_EQ(search_path(), "/x:/y");
  unsetenv("PATH");
  EXPECT_EQ(search_path(), kDefaultPath);
  if (old) setenv("PATH", saved.c_str(), 1);
}

TEST(Process, SpawnAndWaitReportHowTheChildEnded) {
  SpawnIo io;
  io.search_path = true;
  pid_t pid = 0;
  std::string err;
  ASSERT_TRUE(spawn({"sh", "-c", "exit 4"}, io, &pid, &err)) << err;
  int status = wait_for(pid);
  EXPECT_FALSE(exited_ok(status));
  EXPECT_EQ(exit_text(status), "exited with status 4");
  ASSERT_TRUE(spawn({"sh", "-c", "kill -9 $$"}, io, &pid, &err)) << err;
  EXPECT_EQ(exit_text(wait_for(pid)), "was killed by signal 9");
  ASSERT_TRUE(spawn({"true"}, io, &pid, &err)) << err;
  EXPECT_TRUE(exited_ok(wait_for(pid)));
  EXPECT_FALSE(exited_ok(-1));
}

TEST(Process, SpawnNamesTheCallWhenTheProgramIsMissing) {
  SpawnIo io;
  pid_t pid = 0;
  std::string err;
  EXPECT_FALSE(spawn({"/no/such/program"}, io, &pid, &err));
  EXPECT_EQ(err, "posix_spawn(/no/such/program): No such file or directory");
  io.search_path = true;
  EXPECT_FALSE(spawn({"gpuenv-no-such-program"}, io, &pid, &err));
  EXPECT_EQ(err, "posix_spawnp(gpuenv-no-such-program): No such file or directory");
  EXPECT_FALSE(spawn({}, io, &pid, &err));
}

TEST(Process, SpawnSendsStdoutWhereAsked) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  SpawnIo io;
  io.search_path = true, io.null_stdin = true, io.stdout_fd = fds[1], io.null_stderr = true;
  pid_t pid = 0;
  std::string err;
  ASSERT_TRUE(spawn({"sh", "-c", "echo out; echo err >&2; cat"}, io, &pid, &err)) << err;
  close(fds[1]);
  char buf[64] = {};
  ssize_t n = read(fds[0], buf, sizeof buf - 1);
  close(fds[0]);
  EXPECT_TRUE(exited_ok(wait_for(pid)));
  EXPECT_EQ(std::string(buf, n > 0 ? n : 0), "out\n");  // stderr discarded, stdin empty
}

}  // namespace
}  // namespace gpuenv::sys
