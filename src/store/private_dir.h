// Where gpuenv may keep files without another user steering them: the
// store's directory, the cache root, the store file itself. A directory
// that someone else owns or may write to lets them plant a symbolic link
// that root's `gpuenv bench` would then create and write (docs/security.md,
// "Files gpuenv writes").
#pragma once

#include <string>

namespace gpuenv::store {

/// Why this user should not keep files in `dir`: it (or, when it is missing,
/// its nearest existing parent) is no directory, is owned by another user
/// than this one or root, or is writable by group or others without the
/// sticky bit; or a symbolic link on the way to it is owned by another
/// user. "" when `dir` is fine or "". The message names the path and the fix.
std::string unsafe_dir(const std::string& dir);

/// unsafe_dir(), then creates `dir` and its missing parents with mode 0700.
bool make_private_dir(const std::string& dir, std::string* err);

/// Checks that `path` is a regular file owned by this user or root, without
/// following a symbolic link or blocking on a FIFO. When it is missing:
/// with `create`, creates it (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600); without,
/// sets *exists to false and succeeds.
bool check_store_file(const std::string& path, bool create, bool* exists, std::string* err);

}  // namespace gpuenv::store
