#include "sys/safe_dir.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <deque>

#include "sys/error_text.h"

namespace gpuenv::sys {
namespace {

constexpr int kMaxLinks = 40;  // as the kernel's path walk

bool trusted(uid_t owner) { return owner == geteuid() || owner == 0; }

std::string uid_text(uid_t uid) { return "uid " + std::to_string(uid); }

// Puts the components of `path` (without "" and ".") before *rest.
void push_components(const std::string& path, std::deque<std::string>* rest) {
  std::deque<std::string> parts;
  for (size_t start = 0; start <= path.size();) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string part = path.substr(start, end - start);
    if (!part.empty() && part != ".") parts.push_back(part);
    start = end + 1;
  }
  rest->insert(rest->begin(), parts.begin(), parts.end());
}

std::string parent_of(const std::string& dir) {
  size_t slash = dir.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : dir.substr(0, slash);
}

std::string child_of(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

std::string working_dir() {
  char buf[PATH_MAX];
  return getcwd(buf, sizeof buf) ? buf : ".";
}

// A directory's owner and mode, judged; "" when fine.
std::string judge_dir(const std::string& at, const struct stat& st, Sticky sticky,
                      const std::string& elsewhere) {
  if (!trusted(st.st_uid))
    return at + " is owned by " + uid_text(st.st_uid) + ", not by you (" + uid_text(geteuid()) +
           ") or root: its owner could replace what gpuenv keeps there; " + elsewhere;
  if (!(st.st_mode & (S_IWGRP | S_IWOTH))) return "";
  if (sticky == Sticky::kRefused)
    return at + " is writable by its group or by others (sshd's StrictModes refuses that, sticky or not): "
           "only root or you may be able to change it; `chmod go-w " + at + "`, or " + elsewhere;
  if (st.st_mode & S_ISVTX) return "";
  return at + " is writable by " + ((st.st_mode & S_IWOTH) ? "everyone" : "its group") +
         " without the sticky bit: another user could plant a symbolic link there; `chmod go-w " + at +
         "` (or `chmod +t`), or " + elsewhere;
}

}  // namespace

std::string unsafe_dir(const std::string& dir, Sticky sticky, const std::string& elsewhere) {
  if (dir.empty()) return "";
  std::deque<std::string> rest;
  push_components(dir[0] == '/' ? dir : working_dir() + "/" + dir, &rest);
  std::string at = "/";  // resolved: no link in it, every directory judged
  struct stat st;
  if (stat("/", &st) != 0) return errno_text("stat", "/");
  if (std::string why = judge_dir("/", st, sticky, elsewhere); !why.empty()) return why;
  for (int links = 0; !rest.empty();) {
    std::string name = rest.front();
    rest.pop_front();
    if (name == "..") {
      at = parent_of(at);
      continue;
    }
    std::string next = child_of(at, name);
    if (lstat(next.c_str(), &st) != 0) return errno == ENOENT ? "" : errno_text("lstat", next);
    if (S_ISLNK(st.st_mode)) {
      if (!trusted(st.st_uid))
        return next + " is a symbolic link owned by " + uid_text(st.st_uid) +
               ", who could point it anywhere; " + elsewhere;
      char target[PATH_MAX];
      ssize_t n = readlink(next.c_str(), target, sizeof target - 1);
      if (n < 0) return errno_text("readlink", next);
      if (++links > kMaxLinks) return errno_text("readlink", next, ELOOP);
      target[n] = '\0';
      if (target[0] == '/') at = "/";
      push_components(target, &rest);
      continue;
    }
    if (!S_ISDIR(st.st_mode)) return next + " is not a directory";
    if (std::string why = judge_dir(next, st, sticky, elsewhere); !why.empty()) return why;
    at = next;
  }
  return "";
}

}  // namespace gpuenv::sys
