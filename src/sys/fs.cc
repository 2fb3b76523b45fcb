#include "sys/fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "sys/error_text.h"
#include "sys/file_write.h"

namespace gpuenv::fs {

std::string errno_text(const std::string& call, const std::string& arg, int e) {
  return sys::errno_text(call, arg, e);
}

std::string errno_text(const std::string& what, int e) { return sys::errno_text(what, e); }

bool write_all(int fd, const std::string& content) { return sys::write_all(fd, content); }

namespace {

// Appends to *text until the end of the file or `limit` bytes.
bool read_fd(int fd, const std::string& path, std::size_t limit, std::string* text,
             std::string* err) {
  char buf[8192];
  while (text->size() < limit) {
    ssize_t n = ::read(fd, buf, std::min(sizeof buf, limit - text->size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return *err = errno_text("read", path), false;
    if (n == 0) return true;
    text->append(buf, n);
  }
  return true;
}

bool read_up_to(const std::string& path, std::size_t limit, std::string* text,
                std::string* err) {
  text->clear();
  int fd = open_regular(path, err);
  if (fd < 0) return false;
  bool ok = read_fd(fd, path, limit, text, err);
  ::close(fd);
  return ok;
}

const char* file_type(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return S_ISDIR(mode) ? "a directory" : "not a file";
}

}  // namespace

namespace {

// open(2) with O_RDONLY | O_NONBLOCK | O_CLOEXEC | extra, then fstat(2):
// only a regular file is kept open.
int open_checked(const std::string& path, int extra, struct stat* st, std::string* err) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | extra);
  if (fd < 0 && errno == ELOOP && (extra & O_NOFOLLOW))
    return *err = path + " is a symbolic link: name the file itself (a link here could point "
                         "anywhere, and gpuenv does not follow it)", -1;
  if (fd < 0) return *err = errno_text("open", path), -1;
  if (::fstat(fd, st) != 0) {
    *err = errno_text("fstat", path);
    ::close(fd);
    return -1;
  }
  if (!S_ISREG(st->st_mode)) {
    *err = path + ": not a regular file (" + file_type(st->st_mode) + ")";
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

int open_regular(const std::string& path, std::string* err, std::uint64_t* size) {
  struct stat st;
  int fd = open_checked(path, 0, &st, err);
  if (fd >= 0 && size) *size = static_cast<std::uint64_t>(st.st_size);
  return fd;
}

int open_regular_nofollow(const std::string& path, struct stat* st, std::string* err) {
  return open_checked(path, O_NOFOLLOW, st, err);
}

std::string under(const std::string& root, const std::string& path) {
  if (root.empty() || root == "/") return path;
  std::string r = root;
  while (r.size() > 1 && r.back() == '/') r.pop_back();
  return path.empty() || path[0] != '/' ? r + "/" + path : r + path;
}

std::string join(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

std::string dirname(const std::string& path) {
  std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string basename(const std::string& path) {
  std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string normalize(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t i = 0;
  while (i <= path.size()) {
    std::size_t slash = std::min(path.find('/', i), path.size());
    std::string part = path.substr(i, slash - i);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    i = slash + 1;
  }
  std::string out;
  for (const std::string& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

bool read_file(const std::string& path, std::string* text, std::string* err) {
  if (!read_up_to(path, kMaxFileBytes + 1, text, err)) return false;
  if (text->size() <= kMaxFileBytes) return true;
  *err = "read(" + path + "): file larger than " + std::to_string(kMaxFileBytes) + " bytes";
  text->clear();
  return false;
}

bool read_file_nofollow(const std::string& path, std::size_t max_bytes, std::string* out, std::string* err) {
  struct stat st;
  int fd = open_regular_nofollow(path, &st, err);
  if (fd < 0) return false;
  out->clear();
  char buf[4096];
  ssize_t n = 0;
  while (out->size() <= max_bytes && (n = read(fd, buf, sizeof buf)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    out->append(buf, static_cast<std::size_t>(n));
  }
  int e = errno;
  close(fd);
  if (out->size() > max_bytes) *err = path + " is larger than " + std::to_string(max_bytes) + " bytes";
  else if (n < 0) *err = errno_text("read", path, e);
  else return true;
  return false;
}

bool read_head(const std::string& path, std::size_t max, std::string* text, std::string* err) {
  return read_up_to(path, max, text, err);
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool is_dir(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool list_dir(const std::string& path, std::vector<std::string>* names,
              std::string* err) {
  names->clear();
  DIR* dir = ::opendir(path.c_str());
  if (!dir) return *err = errno_text("opendir", path), false;
  while (struct dirent* e = ::readdir(dir)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names->push_back(name);
  }
  ::closedir(dir);
  std::sort(names->begin(), names->end());
  return true;
}

bool list_subdirs(const std::string& path, std::vector<std::string>* names, std::string* err) {
  names->clear();
  DIR* dir = ::opendir(path.c_str());
  if (!dir) return *err = errno_text("opendir", path), false;
  while (struct dirent* e = ::readdir(dir)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (e->d_type == DT_DIR || (e->d_type == DT_UNKNOWN && is_dir(path + "/" + name))) names->push_back(name);
  }
  ::closedir(dir);
  std::sort(names->begin(), names->end());
  return true;
}

bool read_link(const std::string& path, std::string* target, std::string* err) {
  char buf[PATH_MAX];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof buf);
  if (n < 0) return *err = errno_text("readlink", path), false;
  if (static_cast<std::size_t>(n) == sizeof buf) {
    *err = "readlink(" + path + "): target too long";
    return false;
  }
  target->assign(buf, n);
  return true;
}

bool resolve(const std::string& root, const std::string& path,
             std::string* resolved, std::string* err) {
  if (root.empty() || root == "/") {
    char buf[PATH_MAX];
    if (!::realpath(path.c_str(), buf))
      return *err = errno_text("realpath", path), false;
    *resolved = buf;
    return true;
  }
  std::string cur = path;
  for (int hop = 0; hop < 40; ++hop) {
    struct stat st;
    std::string real = under(root, cur);
    if (::lstat(real.c_str(), &st) != 0)
      return *err = errno_text("lstat", real), false;
    if (!S_ISLNK(st.st_mode)) return *resolved = cur, true;
    std::string target;
    if (!read_link(real, &target, err)) return false;
    cur = normalize(!target.empty() && target[0] == '/'
                        ? target
                        : join(dirname(cur), target));
  }
  *err = "resolve(" + path + "): too many levels of symbolic links";
  return false;
}

std::string executable_path() {
  std::string target, err;
  return read_link("/proc/self/exe", &target, &err) ? target : "";
}

std::vector<std::string> own_file_candidates(const std::string& file_name, const std::string& env_value,
                                             const std::string& exe_path) {
  if (!env_value.empty()) return {env_value};
  if (exe_path.empty()) return {file_name};
  std::string dir = dirname(exe_path);
  return {join(dir, file_name), join(dir, "../lib/gpuenv/" + file_name)};
}

}  // namespace gpuenv::fs
