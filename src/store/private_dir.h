// Where gpuenv may keep files without another user steering them: the
// store's directory, the cache root, the store file itself. A directory
// that someone else owns or may write to lets them plant a symbolic link
// that root's `gpuenv bench` would then create and write (docs/security.md,
// "Files gpuenv writes").
#pragma once

#include <string>

namespace gpuenv::store {

/// Why this user should not keep files in `dir`: the one safe-directory rule
/// (sys/safe_dir.h, sticky directories trusted), its message ending with
/// the store's fix (--cache-root, --db). "" when `dir` is fine or "".
std::string unsafe_dir(const std::string& dir);

/// unsafe_dir(), then creates `dir` and its missing parents with mode 0700.
bool make_private_dir(const std::string& dir, std::string* err);

/// Checks that `path` is a regular file owned by this user or root, without
/// following a symbolic link or blocking on a FIFO. When it is missing:
/// with `create`, creates it (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600); without,
/// sets *exists to false and succeeds.
bool check_store_file(const std::string& path, bool create, bool* exists, std::string* err);

}  // namespace gpuenv::store
