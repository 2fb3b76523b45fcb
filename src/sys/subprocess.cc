#include "sys/subprocess.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "sys/fs.h"
#include "sys/text.h"

extern char** environ;

namespace gpuenv::sys {

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

int exec_status(int e) { return e == ENOENT ? kExitCommandNotFound : kExitCannotExecute; }

std::string search_path() {
  const char* path = std::getenv("PATH");
  return path ? path : kDefaultPath;
}

std::vector<std::string> path_entries(const std::string& path) {
  std::vector<std::string> out;
  for (std::string_view dir : split(path, ':')) out.emplace_back(dir.empty() ? "." : dir);
  return out;
}

std::optional<std::string> find_on_path(const std::string& name, const std::string& path,
                                        const std::function<bool(const std::string&)>& accept) {
  for (const auto& dir : path_entries(path))
    if (std::string candidate = dir + "/" + name; accept(candidate)) return candidate;
  return std::nullopt;
}

bool is_regular_file(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool is_executable_file(const std::string& path) {
  return is_regular_file(path) && access(path.c_str(), X_OK) == 0;
}

int exec(const std::vector<std::string>& argv) {
  if (argv.empty()) return ENOENT;
  std::vector<char*> args = c_argv(argv);
  execvp(args[0], args.data());
  return errno;
}

bool spawn(const std::vector<std::string>& argv, const SpawnIo& io, pid_t* pid, std::string* err) {
  const char* call = io.search_path ? "posix_spawnp" : "posix_spawn";
  if (argv.empty()) return *err = fs::errno_text(call, "", ENOENT), false;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (io.null_stdin) posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (io.stdout_fd >= 0) posix_spawn_file_actions_adddup2(&actions, io.stdout_fd, 1);
  if (io.null_stderr) posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args = c_argv(argv);
  int rc = io.search_path ? posix_spawnp(pid, args[0], &actions, nullptr, args.data(), environ)
                          : posix_spawn(pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) *err = fs::errno_text(call, argv[0], rc);
  return rc == 0;
}

int wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return status;
}

bool exited_ok(int status) { return status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0; }

std::string exit_text(int status) {
  return WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                           : "was killed by signal " + std::to_string(WTERMSIG(status));
}

}  // namespace gpuenv::sys
