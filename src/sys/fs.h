// A small file-reading seam for sense/: every path gpuenv reads from /proc,
// /sys or /dev goes through here, under a root that tests point at a fake
// tree. Errors are values naming the call and the path.
#pragma once

#include <cerrno>
#include <cstdint>
#include <sys/stat.h>

#include <string>
#include <vector>

namespace gpuenv::fs {

/// Files longer than this are refused: the kernel files we read are small,
/// and a hostile or runaway file must not exhaust memory.
inline constexpr std::size_t kMaxFileBytes = 16 << 20;

/// "CALL(ARG): strerror(e)", the one form of an error that names a system
/// call and its argument: errno_text("open", "/etc/x") ->
/// "open(/etc/x): No such file or directory".
std::string errno_text(const std::string& call, const std::string& arg, int e = errno);

/// "WHAT: strerror(e)", for a call without an argument worth naming.
std::string errno_text(const std::string& what, int e = errno);

/// Writes all of `content` to `fd`, retrying short writes and EINTR; false
/// (errno set) when a write fails.
bool write_all(int fd, const std::string& content);

/// `path` (absolute) as seen under `root`: "/" leaves it unchanged,
/// "/tmp/fake" + "/proc/x" gives "/tmp/fake/proc/x".
std::string under(const std::string& root, const std::string& path);

/// `dir` + "/" + `name`, without doubling the slash when dir is "/".
std::string join(const std::string& dir, const std::string& name);

/// Everything up to the last '/': "/a/b" -> "/a", "/a" -> "/", "a" -> ".".
std::string dirname(const std::string& path);

/// Everything after the last '/'.
std::string basename(const std::string& path);

/// Lexically collapses "//", "." and ".." in an absolute path ("/a/b/../c"
/// -> "/a/c"); ".." at the top stays at "/".
std::string normalize(const std::string& path);

/// Opens `path` to read: O_RDONLY | O_NONBLOCK | O_CLOEXEC, so a FIFO
/// does not block the open, then fstat() and refuse anything but a regular
/// file (a FIFO, socket, device or directory would block a read or never
/// end). Every file gpuenv reads is opened here. Returns the descriptor
/// (the caller closes it), with the file's size in *size if given; -1 and
/// *err ("open(PATH): No such file or directory", "PATH: not a regular
/// file (a FIFO)") on failure.
int open_regular(const std::string& path, std::string* err, std::uint64_t* size = nullptr);

/// open_regular for a file a less privileged user may control: a symbolic
/// link as its last component is refused too (O_NOFOLLOW: "PATH is a
/// symbolic link: ..."), and *st gets the file's status.
int open_regular_nofollow(const std::string& path, struct stat* st, std::string* err);

/// Reads a whole regular file (open_regular) into *text. False and *err
/// ("open(path): reason") on failure, including files over kMaxFileBytes.
bool read_file(const std::string& path, std::string* text, std::string* err);

/// A whole file a less privileged user may control (open_regular_nofollow),
/// refusing one over max_bytes ("PATH is larger than N bytes").
bool read_file_nofollow(const std::string& path, std::size_t max_bytes, std::string* out, std::string* err);

/// The first `max` bytes of a regular file (all of it if shorter), read as
/// read_file does.
bool read_head(const std::string& path, std::size_t max, std::string* text, std::string* err);

/// This process's executable (/proc/self/exe), "" when unreadable.
std::string executable_path();

/// Where gpuenv looks for a file of its own installation (the bench plugin,
/// the kubelet client, the Python hook's directory), in order: `env_value` (its environment variable)
/// alone when set; else `file_name` beside the executable `exe_path`, then
/// in ../lib/gpuenv/ from it (an installed prefix); `file_name` alone when
/// the executable is unknown.
std::vector<std::string> own_file_candidates(const std::string& file_name, const std::string& env_value,
                                             const std::string& exe_path);

/// Whether `path` exists (following symlinks).
bool exists(const std::string& path);

/// Whether `path` is a directory (following symlinks).
bool is_dir(const std::string& path);

/// Names in a directory, sorted, without "." and "..".
bool list_dir(const std::string& path, std::vector<std::string>* names,
              std::string* err);

/// The directories in a directory (by the entries' own type, stat(2) only
/// where the file system gives none), sorted, without "." and "..".
bool list_subdirs(const std::string& path, std::vector<std::string>* names, std::string* err);

/// The target of a symbolic link, unresolved. False if `path` is not one.
bool read_link(const std::string& path, std::string* target, std::string* err);

/// Follows `path`'s final component through symlinks (at most 40 hops) as
/// seen under `root`: absolute targets are re-rooted, relative ones taken
/// from the link's directory. Returns the path as seen from inside `root`.
/// With root "/" this is realpath(3) (which also resolves directories).
bool resolve(const std::string& root, const std::string& path,
             std::string* resolved, std::string* err);

}  // namespace gpuenv::fs
