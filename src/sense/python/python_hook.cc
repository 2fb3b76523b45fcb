#include "sense/python/python_hook.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "sys/fs.h"
#include "store/private_dir.h"

namespace gpuenv {
namespace {

constexpr char kFix[] = "fix its owner and mode (chown root, chmod go-w), or set GPUENV_PYTHON_DIR to a directory of yours";

// What lstat() of a hook path shows that another user could use: a link, a
// writable mode, a foreign owner ("" when none). `want_dir`: a directory,
// else a regular file.
std::string unsafe_entry(const std::string& path, bool want_dir) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return fs::errno_text("lstat", path);
  if (S_ISLNK(st.st_mode)) return path + " is a symbolic link: gpuenv's hook is not run through links; " + kFix;
  if (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
    return path + (want_dir ? " is not a directory" : " is not a regular file");
  if (st.st_uid != 0 && st.st_uid != geteuid())
    return path + " is owned by uid " + std::to_string(st.st_uid) + ", not by you or root; " + kFix;
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return path + " is writable by " + ((st.st_mode & S_IWOTH) ? "everyone" : "its group") +
           ": anyone who can write it could run code in every job; " + kFix;
  return "";
}

}  // namespace

std::string find_python_hook_dir(const std::string& exe_path) {
  if (exe_path.empty()) return "";
  for (const std::string& candidate : fs::own_file_candidates("python", "", exe_path)) {
    std::string hook = fs::normalize(candidate);
    if (fs::exists(fs::join(hook, kPythonHookFile))) return hook;
  }
  return "";
}

std::string unsafe_hook_dir(const std::string& dir) {
  if (std::string why = store::unsafe_dir(dir); !why.empty()) return why;
  if (std::string why = unsafe_entry(dir, true); !why.empty()) return why;
  if (std::string why = unsafe_entry(fs::join(dir, kPythonHookFile), false); !why.empty()) return why;
  for (const char* module : kPythonHookModules) {
    std::string path = fs::join(dir, module);
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) continue;  // an older hook without it: sitecustomize.py copes
    if (std::string why = unsafe_entry(path, false); !why.empty()) return why;
  }
  return "";
}

PythonHook python_hook() {
  const char* env = std::getenv("GPUENV_PYTHON_DIR");
  PythonHook h;
  h.dir = env != nullptr && *env != '\0' ? env : find_python_hook_dir(fs::executable_path());
  while (h.dir.size() > 1 && h.dir.back() == '/') h.dir.pop_back();  // lstat("link/") would follow it
  if (h.dir.empty()) return h;
  if (h.refused = unsafe_hook_dir(h.dir); !h.refused.empty()) h.dir.clear();
  return h;
}

}  // namespace gpuenv
