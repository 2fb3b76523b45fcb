#include "act/serve/serve_common.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "sys/fs.h"
#include "sys/subprocess.h"
#include "sys/safe_dir.h"
#include "sys/text.h"

namespace gpuenv {
namespace {

Account from_passwd(const passwd& pw) {
  return {pw.pw_name, pw.pw_uid, pw.pw_gid, pw.pw_dir ? pw.pw_dir : "/",
          pw.pw_shell && *pw.pw_shell ? pw.pw_shell : "/bin/sh"};
}

bool lookup_uid(uid_t uid, Account* out, std::string* err) {
  std::vector<char> buf(16384);
  passwd pw, *found = nullptr;
  int rc = getpwuid_r(uid, &pw, buf.data(), buf.size(), &found);
  if (!found) {
    *err = "uid " + std::to_string(uid) + " has no entry in the password database" +
           (rc ? std::string(": ") + std::strerror(rc) : "");
    return false;
  }
  *out = from_passwd(pw);
  return true;
}

bool own_account(const std::string& requested, Account* out, std::string* err) {
  if (!lookup_uid(geteuid(), out, err)) return false;
  if (requested.empty() || requested == out->name) return true;
  *err = "cannot run as " + requested + ": switching users needs root, and gpuenv runs as " +
         out->name;
  return false;
}

std::vector<gid_t> groups_of(const Account& a) {
  int n = 64;
  std::vector<gid_t> groups(n);
  if (getgrouplist(a.name.c_str(), a.gid, groups.data(), &n) < 0) {
    groups.resize(n);
    if (getgrouplist(a.name.c_str(), a.gid, groups.data(), &n) < 0) n = 0;
  }
  groups.resize(n);
  if (groups.empty()) groups.push_back(a.gid);
  return groups;
}

// Whether the mode bits of `st` let `a` (with `groups`) do `bits` (as S_IXOTH etc.).
bool allowed(const struct stat& st, const Account& a, const std::vector<gid_t>& groups, int bits) {
  if (st.st_uid == a.uid) return st.st_mode & (bits << 6);
  if (std::find(groups.begin(), groups.end(), st.st_gid) != groups.end())
    return st.st_mode & (bits << 3);
  return st.st_mode & bits;
}

// A directory `a` can search along its whole path, that only root or `a`
// own and that not everyone can write.
bool usable_dir(const std::string& dir, const Account& a, const std::vector<gid_t>& groups) {
  char real[PATH_MAX];
  if (dir.empty() || dir[0] != '/' || !realpath(dir.c_str(), real)) return false;
  struct stat st;
  if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode) || (st.st_mode & S_IWOTH) ||
      (st.st_uid != 0 && st.st_uid != a.uid))
    return false;
  for (std::string d = real;; d = fs::dirname(d)) {
    if (stat(d.c_str(), &st) != 0 || !allowed(st, a, groups, S_IXOTH)) return false;
    if (d == "/") return true;
  }
}

}  // namespace

bool lookup_account(const std::string& name, Account* out, std::string* err) {
  std::vector<char> buf(16384);
  passwd pw, *found = nullptr;
  int rc = getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found);
  if (!found) {
    *err = "no user named " + name + (rc ? std::string(": ") + std::strerror(rc) : "");
    return false;
  }
  *out = from_passwd(pw);
  return true;
}

bool choose_account(const std::string& requested, bool allow_root, Account* out, std::string* err) {
  if (geteuid() != 0) return own_account(requested, out, err);
  if (requested.empty()) {
    if (allow_root) return lookup_uid(0, out, err);
    *err = "running as root and no user given: pass --user NAME or set GPUENV_USER";
    return false;
  }
  if (!lookup_account(requested, out, err)) return false;
  if (out->uid == 0 && !allow_root) {
    *err = "user " + requested + " is root (uid 0)";
    return false;
  }
  return true;
}

void use_account_env(const Account& a) {
  setenv("HOME", a.home.c_str(), 1);
  setenv("USER", a.name.c_str(), 1);
  setenv("LOGNAME", a.name.c_str(), 1);
  setenv("SHELL", a.shell.c_str(), 1);
  for (const char* xdg : {"XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME",
                          "XDG_STATE_HOME"})
    unsetenv(xdg);
}

bool drop_privileges(const Account& a, std::string* err) {
  if (initgroups(a.name.c_str(), a.gid) != 0) *err = fs::errno_text("initgroups", a.name);
  else if (setgid(a.gid) != 0) *err = fs::errno_text("setgid", std::to_string(a.gid));
  else if (setuid(a.uid) != 0) *err = fs::errno_text("setuid", std::to_string(a.uid));
  else if (a.uid != 0 && (setuid(0) == 0 || seteuid(0) == 0))
    *err = "setuid(" + std::to_string(a.uid) + ") left a way back to root";
  if (!err->empty()) return false;
  use_account_env(a);
  return true;
}

std::string find_on_path(const std::vector<std::string>& names) {
  std::string path = sys::search_path();
  for (const auto& name : names)
    if (auto found = sys::find_on_path(name, path, sys::is_executable_file)) return *found;
  return "";
}

bool run_program(const std::vector<std::string>& argv, std::string* err) {
  sys::SpawnIo io;
  io.search_path = true;
  pid_t pid;
  if (!sys::spawn(argv, io, &pid, err)) return false;
  int status = sys::wait_for(pid);
  if (status < 0) return *err = fs::errno_text("waitpid", argv[0]), false;
  if (sys::exited_ok(status)) return true;
  *err = argv[0] + " " + sys::exit_text(status);
  return false;
}

int exec_program(const std::vector<std::string>& argv, std::string* err) {
  int e = sys::exec(argv);
  *err = "cannot run " + (argv.empty() ? std::string("(no command)") : argv[0]) + ": " + std::strerror(e);
  return sys::exec_status(e);
}

bool check_private_dir(const std::string& dir, std::string* resolved, std::string* err) {
  std::string why = sys::unsafe_dir(dir, sys::Sticky::kRefused,
                                    "only root (or the user gpuenv runs as) may be able to change " + dir +
                                        " and the directories above it");
  if (!why.empty()) return *err = why, false;
  char real[PATH_MAX];
  if (!realpath(dir.c_str(), real)) return *err = fs::errno_text("realpath", dir), false;
  *resolved = real;
  return true;
}

std::string user_search_path(const std::string& value, const Account& a) {
  std::vector<gid_t> groups = groups_of(a);
  std::vector<std::string> kept;
  for (std::string_view entry : split(value, ':')) {
    std::string dir(entry);
    bool seen = std::find(kept.begin(), kept.end(), dir) != kept.end();
    if (!seen && usable_dir(dir, a, groups)) kept.push_back(dir);
  }
  return join(kept, ":");
}

}  // namespace gpuenv
