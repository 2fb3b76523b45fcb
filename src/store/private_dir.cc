#include "store/private_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sys/file_write.h"
#include "sys/fs.h"
#include "sys/safe_dir.h"

namespace gpuenv::store {
namespace {

constexpr char kElsewhere[] = "use a directory of your own (--cache-root DIR or GPUENV_CACHE_ROOT; bench --db FILE)";

bool trusted(uid_t owner) { return owner == geteuid() || owner == 0; }

std::string uid_text(uid_t uid) { return "uid " + std::to_string(uid); }

}  // namespace

std::string unsafe_dir(const std::string& dir) {
  return sys::unsafe_dir(dir, sys::Sticky::kTrusted, kElsewhere);
}

bool make_private_dir(const std::string& dir, std::string* err) {
  if (std::string why = unsafe_dir(dir); !why.empty()) return *err = why, false;
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) return true;
  return sys::make_dirs(dir, 0700, err);  // the rule walked every level, the missing ones too
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
