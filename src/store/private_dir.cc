#include "store/private_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sense/fs.h"

namespace gpuenv::store {
namespace {

constexpr char kElsewhere[] = "use a directory of your own (--cache-root DIR or GPUENV_CACHE_ROOT; bench --db FILE)";

bool trusted(uid_t owner) { return owner == geteuid() || owner == 0; }

std::string uid_text(uid_t uid) { return "uid " + std::to_string(uid); }

// A symbolic link on the way to `path` that another user owns: they could
// point it anywhere (the kernel's fs.protected_symlinks rule, for every
// directory, not only sticky ones).
std::string foreign_link(const std::string& path) {
  for (size_t end = path.find('/', 1);; end = path.find('/', end + 1)) {
    std::string prefix = path.substr(0, end);
    struct stat st;
    if (lstat(prefix.c_str(), &st) == 0 && S_ISLNK(st.st_mode) && !trusted(st.st_uid))
      return prefix + " is a symbolic link owned by " + uid_text(st.st_uid) +
             ", who could point it anywhere; " + kElsewhere;
    if (end == std::string::npos) return "";
  }
}

std::string nearest_existing(std::string dir) {
  struct stat st;
  while (lstat(dir.c_str(), &st) != 0 && errno == ENOENT && dir != fs::dirname(dir)) dir = fs::dirname(dir);
  return dir;
}

}  // namespace

std::string unsafe_dir(const std::string& dir) {
  if (dir.empty()) return "";
  if (std::string why = foreign_link(dir); !why.empty()) return why;
  std::string at = nearest_existing(dir);
  struct stat st;
  if (stat(at.c_str(), &st) != 0) return fs::errno_text("stat", at);
  if (!S_ISDIR(st.st_mode)) return at + " is not a directory";
  if (!trusted(st.st_uid))
    return at + " is owned by " + uid_text(st.st_uid) + ", not by you (" + uid_text(geteuid()) +
           ") or root: its owner could replace what gpuenv keeps there; " + kElsewhere;
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
    return at + " is writable by " + ((st.st_mode & S_IWOTH) ? "everyone" : "its group") +
           " without the sticky bit: another user could plant a symbolic link there; `chmod go-w " + at +
           "` (or `chmod +t`), or " + kElsewhere;
  return "";
}

bool make_private_dir(const std::string& dir, std::string* err) {
  if (std::string why = unsafe_dir(dir); !why.empty()) return *err = why, false;
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) return true;
  std::string parent = fs::dirname(dir);
  if (parent != dir && !make_private_dir(parent, err)) return false;
  if (mkdir(dir.c_str(), 0700) == 0 || errno == EEXIST) return true;
  *err = fs::errno_text("mkdir", dir);
  return false;
}

bool check_store_file(const std::string& path, bool create, bool* exists, std::string* err) {
  constexpr int kFlags = O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
  int fd = create ? open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | kFlags, 0600) : -1;
  if (fd < 0 && (!create || errno == EEXIST)) fd = open(path.c_str(), O_RDONLY | kFlags);
  *exists = fd >= 0 || errno != ENOENT;
  if (fd < 0 && errno == ENOENT && !create) return true;
  if (fd < 0 && errno == ELOOP)
    return *err = path + " is a symbolic link: gpuenv does not follow links to its store; remove it, or " +
                  kElsewhere, false;
  if (fd < 0) return *err = fs::errno_text("open", path), false;
  struct stat st;
  std::string why;
  if (fstat(fd, &st) != 0) why = fs::errno_text("fstat", path);
  else if (!S_ISREG(st.st_mode)) why = path + " is not a regular file; " + kElsewhere;
  else if (!trusted(st.st_uid))
    why = path + " is owned by " + uid_text(st.st_uid) + ", not by you or root; " + kElsewhere;
  close(fd);
  if (!why.empty()) *err = why;
  return why.empty();
}

}  // namespace gpuenv::store
