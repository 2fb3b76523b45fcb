// The careful writes: every file gpuenv writes goes through here. A write
// replaces a file atomically (a reader never sees half of it), never
// follows or replaces a link, device, FIFO or socket someone put where the
// file goes, and never works in a directory another user could steer
// (sys/safe_dir.h).
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>

namespace gpuenv::sys {

/// Writes all of `content` to `fd`, retrying short writes and EINTR; false
/// (errno set) when a write fails.
bool write_all(int fd, const std::string& content);

/// Whether `path` names standard output for an --output-style flag: "-" or
/// "/dev/stdout".
bool is_stdout(const std::string& path);

/// Writes `content` to `path` through a temporary dot-file in the same
/// directory (".NAME.tmp.XXXXXX", which directory readers skip) and
/// rename(2), so a reader never sees half a file; the file gets `mode`
/// whatever the umask. Creates the directory (make_dir, 0755) when it is
/// missing, but not its parents. Refuses, with *err naming the path and the fix:
/// a directory on the way that another user could steer (unsafe_dir with
/// sticky directories trusted), and a target that exists but is not a
/// regular file (a symbolic link, device, FIFO, socket or directory), which
/// is left untouched.
bool write_file_atomic(const std::string& path, const std::string& content, mode_t mode,
                       std::string* err);

/// A write a sequence is handed (flow/): write_file_atomic or write_output
/// in a command, a fake in a test.
using WriteFile = std::function<bool(const std::string& path, const std::string& content, mode_t mode,
                                     std::string* err)>;

/// write_file_atomic, except that for is_stdout(path) the content goes to
/// stdout (through stdio, flushed), deliberately written through and never
/// renamed over.
bool write_output(const std::string& path, const std::string& content, mode_t mode, std::string* err);

/// Creates a file that must not exist yet (O_CREAT|O_EXCL|O_NOFOLLOW) with
/// exactly `mode`, whatever the umask, and writes `content`; on failure
/// nothing is left behind.
bool create_exclusive(const std::string& path, const std::string& content, mode_t mode,
                      std::string* err);

/// Creates one directory, which gets exactly `mode` whatever the umask; one
/// that exists already is fine. The one home of mkdir(2).
bool make_dir(const std::string& dir, mode_t mode, std::string* err);

/// Creates directories like `mkdir -p` (make_dir for each level); those it
/// creates get exactly `mode`.
bool make_dirs(const std::string& dir, mode_t mode, std::string* err);

}  // namespace gpuenv::sys
