#include "act/init_user.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "sys/fs.h"

namespace gpuenv {
namespace {

constexpr int kMaxDepth = 64;

bool is_serve_ssh(const std::vector<std::string>& argv) {
  return argv.size() >= 3 && fs::basename(argv[0]) == "gpuenv" && argv[1] == "serve" && argv[2] == "ssh";
}

// Directories that are never a cache root of their own: handing what root
// owns there to a user would give the system away.
bool system_dir(const std::string& root) {
  static const char* const kSystem[] = {"/",     "/bin",  "/boot", "/dev",  "/etc", "/home", "/lib",
                                        "/lib32", "/lib64", "/opt", "/proc", "/root", "/run",
                                        "/sbin", "/srv",  "/sys",  "/tmp",  "/usr", "/var"};
  std::string r = root;
  while (r.size() > 1 && r.back() == '/') r.pop_back();
  for (const char* d : kSystem)
    if (r == d) return true;
  for (const char* d : {"/proc/", "/sys/", "/dev/", "/etc/", "/usr/", "/bin/", "/sbin/", "/boot/"})
    if (r.rfind(d, 0) == 0) return true;
  return r.empty() || r[0] != '/';
}

bool truthy(const std::string& v) { return v == "1" || v == "true" || v == "yes"; }

struct Walk {
  const Account& to;
  std::vector<std::string>* problems;
  size_t handed = 0;

  void fail(const std::string& call, const std::string& path) {
    problems->push_back(fs::errno_text(call, path));
  }

  // Hands `name` in `dir` (at `path`) over when root owns it; descends into
  // directories. Never follows a symlink: fstatat and fchownat with
  // AT_SYMLINK_NOFOLLOW, openat with O_NOFOLLOW.
  void entry(int dir, const char* name, const std::string& path, int depth) {
    struct stat st;
    if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return fail("fstatat", path);
    if (st.st_uid == 0) {
      if (fchownat(dir, name, to.uid, to.gid, AT_SYMLINK_NOFOLLOW) != 0) return fail("chown", path);
      ++handed;
    }
    if (S_ISDIR(st.st_mode) && depth < kMaxDepth) {
      int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0) return fail("open", path);
      children(fd, path, depth + 1);
    }
  }

  // Takes ownership of fd.
  void children(int fd, const std::string& path, int depth) {
    DIR* d = fdopendir(fd);
    if (!d) {
      close(fd);
      return fail("opendir", path);
    }
    while (dirent* e = readdir(d)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      entry(dirfd(d), e->d_name, path + "/" + e->d_name, depth);
    }
    closedir(d);
  }
};

}  // namespace

bool choose_init_user(const std::vector<std::string>& argv, uid_t euid, const std::string& user,
                      const std::string& as_root, InitUser* out, std::string* err) {
  *out = {};
  if (euid != 0) return true;
  if (truthy(as_root)) {
    out->kind = InitUser::Kind::kRoot;
    out->why = std::string("the command runs as root: ") + kRunAsRootVar + "=" + as_root;
    return true;
  }
  if (user.empty()) {
    out->kind = InitUser::Kind::kNoUser;
    out->why = "the command runs as root: GPUENV_USER names no user to run it as";
    return true;
  }
  if (!lookup_account(user, &out->account, err)) {
    *err += "; create the user, or set GPUENV_USER to one that exists (" + std::string(kRunAsRootVar) +
            "=1 keeps root)";
    return false;
  }
  if (out->account.uid == 0) {
    *err = "GPUENV_USER=" + user + " is root (uid 0); set " + kRunAsRootVar + "=1 to run as root";
    return false;
  }
  if (is_serve_ssh(argv)) {
    out->kind = InitUser::Kind::kSshd;
    out->why = "sshd starts as root and runs each session as " + user;
  } else {
    out->kind = InitUser::Kind::kDrop;
    out->why = "the command runs as " + user + " (uid " + std::to_string(out->account.uid) + ")";
  }
  return true;
}

AsUser::AsUser(const Account& a, bool active) {
  if (!active || geteuid() != 0) return;
  if (setegid(a.gid) != 0) {
    error_ = fs::errno_text("setegid", std::to_string(a.gid));
  } else if (seteuid(a.uid) != 0) {
    error_ = fs::errno_text("seteuid", std::to_string(a.uid));
    setegid(0);
  } else {
    switched_ = true;
  }
}

AsUser::~AsUser() {
  if (!switched_) return;
  if (seteuid(0) != 0 || setegid(0) != 0) std::abort();  // root is still the real uid: cannot fail
}

LogEvent init_user_event(const InitUser& u) {
  bool root = u.kind == InitUser::Kind::kRoot || u.kind == InitUser::Kind::kNoUser;
  LogEvent e;
  e.level = root ? Severity::kWarning : Severity::kInfo;
  e.msg = "user";
  e.text = u.why;
  e.fields = {{"message", u.why}};
  if (u.kind == InitUser::Kind::kDrop || u.kind == InitUser::Kind::kSshd) {
    e.fields["user"] = u.account.name;
    e.fields["uid"] = u.account.uid;
  } else if (root) {
    e.fields["user"] = "root";
    e.fields["uid"] = 0;
  }
  return e;
}

size_t hand_cache_root(const std::string& root, const Account& a, std::vector<std::string>* problems) {
  if (system_dir(root)) {
    problems->push_back("the cache root " + root + " is a system directory (or not absolute): " +
                        "nothing under it is handed to " + a.name + "; point GPUENV_CACHE_ROOT at a " +
                        "directory of its own");
    return 0;
  }
  std::string err;
  if (!sys::make_dirs(root, 0755, &err)) {
    problems->push_back(err);
    return 0;
  }
  Walk walk{a, problems};
  std::string parent = fs::dirname(root);
  int pfd = open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (pfd < 0) {
    walk.fail("open", parent);
    return 0;
  }
  walk.entry(pfd, fs::basename(root).c_str(), root, 0);
  close(pfd);
  return walk.handed;
}

std::vector<std::string> cache_dirs_in_plan(const Plan& plan, const std::string& root) {
  std::vector<std::string> dirs;
  if (root.empty()) return dirs;
  std::string prefix = root.back() == '/' ? root : root + "/";
  for (const auto& s : plan.settings)
    if (s.value.rfind(prefix, 0) == 0 && s.value.find('\n') == std::string::npos) dirs.push_back(s.value);
  return dirs;
}

}  // namespace gpuenv
