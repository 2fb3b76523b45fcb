#include "sys/file_write.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "sys/error_text.h"
#include "sys/fs.h"
#include "sys/safe_dir.h"

namespace gpuenv::sys {
namespace {

constexpr char kElsewhere[] = "write to a directory that only you or root can change";

const char* kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  return "not a regular file";
}

// The directory is made (one level, 0755) after the rule passed it.
bool ensure_dir(const std::string& dir, std::string* err) {
  if (std::string why = unsafe_dir(dir, Sticky::kTrusted, kElsewhere); !why.empty())
    return *err = why, false;
  return make_dir(dir, 0755, err);
}

// A missing target or a regular file may be replaced; nothing else is.
bool replaceable(const std::string& path, std::string* err) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return true;
    return *err = errno_text("lstat", path), false;
  }
  if (S_ISREG(st.st_mode)) return true;
  *err = path + " is " + kind_of(st.st_mode) +
         ": gpuenv replaces only regular files and leaves this one as it is; remove it, or give another "
         "path (- for stdout)";
  return false;
}

bool fill_temp(int fd, const std::string& tmp, const std::string& content, mode_t mode,
               std::string* err) {
  if (fchmod(fd, mode) != 0) *err = errno_text("fchmod", tmp);
  else if (!write_all(fd, content)) *err = errno_text("write", tmp);
  else if (fsync(fd) != 0) *err = errno_text("fsync", tmp);
  return err->empty();
}

}  // namespace

bool write_all(int fd, const std::string& content) {
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) errno = EIO;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool is_stdout(const std::string& path) { return path == "-" || path == "/dev/stdout"; }

bool write_file_atomic(const std::string& path, const std::string& content, mode_t mode,
                       std::string* err) {
  if (!ensure_dir(fs::dirname(path), err) || !replaceable(path, err)) return false;
  // A dot-file: readers of a directory (NFD's features.d) skip it.
  std::string tmp = fs::dirname(path) + "/." + fs::basename(path) + ".tmp.XXXXXX";
  int fd = mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) return *err = errno_text("mkstemp", tmp), false;
  std::string e;
  bool ok = fill_temp(fd, tmp, content, mode, &e);
  if (close(fd) != 0 && ok) e = errno_text("close", tmp), ok = false;
  if (ok && rename(tmp.c_str(), path.c_str()) != 0) e = errno_text("rename", path), ok = false;
  if (!ok) {
    unlink(tmp.c_str());
    *err = e;
  }
  return ok;
}

bool write_output(const std::string& path, const std::string& content, mode_t mode, std::string* err) {
  if (!is_stdout(path)) return write_file_atomic(path, content, mode, err);
  errno = 0;
  if (std::fwrite(content.data(), 1, content.size(), stdout) == content.size() && std::fflush(stdout) == 0)
    return true;
  *err = errno_text("write", "stdout", errno ? errno : EIO);
  return false;
}

bool create_exclusive(const std::string& path, const std::string& content, mode_t mode,
                      std::string* err) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) return *err = errno_text("open", path), false;
  bool ok = fchmod(fd, mode) == 0 && write_all(fd, content) && fsync(fd) == 0;
  if (!ok) *err = errno_text("write", path);
  if (close(fd) != 0 && ok) *err = errno_text("close", path), ok = false;
  if (!ok) unlink(path.c_str());
  return ok;
}

bool make_dir(const std::string& dir, mode_t mode, std::string* err) {
  if (mkdir(dir.c_str(), mode) == 0) {
    chmod(dir.c_str(), mode);  // exactly `mode`, whatever the umask
    return true;
  }
  if (errno == EEXIST) return true;
  *err = errno_text("mkdir", dir);
  return false;
}

bool make_dirs(const std::string& dir, mode_t mode, std::string* err) {
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos < dir.size() && dir[pos] != '/') continue;
    if (!make_dir(dir.substr(0, pos), mode, err)) return false;
  }
  return true;
}

}  // namespace gpuenv::sys
