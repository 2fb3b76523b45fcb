// What `gpuenv serve jupyter` and `gpuenv serve ssh` share: the account a
// service runs as, dropping root, finding and running programs, and files
// that must be created with exact modes.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "model/exit_codes.h"
#include "sys/file_write.h"

namespace gpuenv {

// A service that refuses to start as configured (no authorized key, Jupyter
// as root without --allow-root, a user that cannot be used) exits with
// kExitServeConfig (78, sysexits.h's EX_CONFIG; model/exit_codes.h).

/// A user account from the password database.
struct Account {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string home;
  std::string shell;
};

/// Looks a user up by name (getpwnam).
bool lookup_account(const std::string& name, Account* out, std::string* err);

/// The account a service is for. `requested` is --user or GPUENV_USER
/// ("" when neither is given). As root: that user, or root itself only when
/// allow_root; not root: this process's own user, and `requested` must be
/// empty or name it (switching users needs root). On failure *err says why
/// (exit with kExitServeConfig).
bool choose_account(const std::string& requested, bool allow_root, Account* out, std::string* err);

/// Points HOME, USER, LOGNAME and SHELL at `a` and unsets the XDG_*
/// directories, which belong to the account that started gpuenv.
void use_account_env(const Account& a);

/// Becomes `a` for good: initgroups, setgid, setuid, then checks that root
/// cannot be regained; also calls use_account_env. Only when running as root.
bool drop_privileges(const Account& a, std::string* err);

/// The full path of the first of `names` found executable on PATH, or "".
std::string find_on_path(const std::vector<std::string>& names);

/// Runs argv (looked up on PATH) and waits for it; true when it exits 0.
bool run_program(const std::vector<std::string>& argv, std::string* err);

/// Replaces this process with argv (looked up on PATH). Returns only when
/// that fails: 127 (not found) or 126, with *err.
int exec_program(const std::vector<std::string>& argv, std::string* err);

/// Checks that only root and this process's user can change `dir`: the one
/// safe-directory rule (sys/safe_dir.h) with sticky directories refused, as
/// sshd's StrictModes refuses them above its files; then resolves it
/// (realpath) into *resolved.
bool check_private_dir(const std::string& dir, std::string* resolved, std::string* err);

/// A search path (PATH, LD_LIBRARY_PATH) for `a`'s sessions: the entries of
/// `value` that are absolute, directories `a` can reach and search, owned
/// by root or `a` and not world-writable, each once, in order. This drops
/// what only root can use (/root/...), relative entries, and directories
/// another account could plant programs in.
std::string user_search_path(const std::string& value, const Account& a);

}  // namespace gpuenv
