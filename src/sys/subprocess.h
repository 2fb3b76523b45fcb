// Starting programs: argv for the exec family, PATH search, spawn, exec and
// wait, with the shell's 126/127 convention. Every layer that runs a
// program goes through here; what it tells the user stays with it.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpuenv::sys {

/// The status a POSIX shell gives a command it found but could not run.
inline constexpr int kExitCannotExecute = 126;
/// The status a POSIX shell gives a command it did not find.
inline constexpr int kExitCommandNotFound = 127;

/// The search path when $PATH is unset, as glibc's execvp uses.
inline constexpr const char* kDefaultPath = "/usr/local/bin:/usr/bin:/bin";

/// `argv` as the exec family takes it: pointers into the strings, then a
/// null. The strings must outlive it.
std::vector<char*> c_argv(const std::vector<std::string>& argv);

/// The shell's status for an exec that failed with errno `e`: 127 for
/// ENOENT (nothing there), 126 otherwise (there, but it cannot run).
int exec_status(int e);

/// $PATH, or kDefaultPath when it is unset.
std::string search_path();

/// The directories of a search path as execvp reads them: split at ':',
/// an empty entry (leading, trailing, "::") meaning ".".
std::vector<std::string> path_entries(const std::string& path);

/// DIR/name for the first DIR of `path` (path_entries) where accept(DIR/name)
/// holds; nullopt when none does.
std::optional<std::string> find_on_path(const std::string& name, const std::string& path,
                                        const std::function<bool(const std::string&)>& accept);

/// Whether `path` is a regular file (following symlinks).
bool is_regular_file(const std::string& path);
/// Whether `path` is a regular file this process may execute.
bool is_executable_file(const std::string& path);

/// Replaces this process with argv (execvp: looked up on PATH unless
/// argv[0] holds a '/'). Returns only when that fails, with its errno.
int exec(const std::vector<std::string>& argv);

/// Where a spawned child's standard streams go.
struct SpawnIo {
  bool search_path = false;  // look argv[0] up on PATH (posix_spawnp)
  bool null_stdin = false;   // stdin from /dev/null
  int stdout_fd = -1;        // stdout to this descriptor; -1 keeps ours
  bool null_stderr = false;  // stderr to /dev/null
};

/// Starts argv with this process's environment; the child's pid in *pid.
/// False with *err ("posix_spawn(ARGV0): reason", or posix_spawnp) when it
/// cannot start, which includes a program that is not there.
bool spawn(const std::vector<std::string>& argv, const SpawnIo& io, pid_t* pid, std::string* err);

/// Waits for `pid` (retrying EINTR) and returns its wait status; -1 with
/// errno when waitpid fails.
int wait_for(pid_t pid);

/// Whether a wait status says the child exited with status 0.
bool exited_ok(int status);

/// How a child with wait status `status` ended: "exited with status 4",
/// "was killed by signal 9".
std::string exit_text(int status);

}  // namespace gpuenv::sys
