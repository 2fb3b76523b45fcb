// Who `gpuenv init` runs the command as, and the cache root handed to that
// user. Started as root (the image's default), init writes /etc/gpuenv, then
// becomes GPUENV_USER for good before it starts the command: batch jobs and
// Jupyter alike run unprivileged. docs/container.md, "Who runs what".
#pragma once

#include <string>
#include <vector>

#include "act/init_log.h"
#include "act/serve/serve_common.h"
#include "model/plan.h"

namespace gpuenv {

/// The opt-in that keeps root for the command.
inline constexpr const char* kRunAsRootVar = "GPUENV_RUN_AS_ROOT";

/// What init decided about the command's user.
struct InitUser {
  enum class Kind {
    kUnchanged,   // init is not root: the command runs as init's own user
    kDrop,        // init becomes `account` before starting the command
    kRoot,        // GPUENV_RUN_AS_ROOT=1: the command keeps root
    kSshd,        // `gpuenv serve ssh`: sshd needs root; it starts each session as the user
    kNoUser,      // root and no GPUENV_USER: nobody to become, the command keeps root
  };
  Kind kind = Kind::kUnchanged;
  Account account;  // kDrop and kSshd: the user (sshd's AllowUsers)
  std::string why;  // the human sentence for init's log
};

/// Decides who runs argv. `euid` is init's effective uid; `user` is
/// GPUENV_USER ("" when unset); `as_root` is GPUENV_RUN_AS_ROOT. Fails (with
/// *err naming the user and the fix) when the user cannot be used.
bool choose_init_user(const std::vector<std::string>& argv, uid_t euid, const std::string& user,
                      const std::string& as_root, InitUser* out, std::string* err);

/// While it lives, this process's effective uid and gid are `a`'s (root
/// keeps its real ids, so the destructor can switch back): init senses and
/// plans with the user's rights, so the cache root and the store are judged
/// as the user will use them, and nothing is read that the user could not.
/// Does nothing when `active` is false or the process is not root.
class AsUser {
 public:
  AsUser(const Account& a, bool active);
  ~AsUser();
  AsUser(const AsUser&) = delete;
  AsUser& operator=(const AsUser&) = delete;
  /// Why switching failed ("" when it worked or was not asked for).
  const std::string& error() const { return error_; }

 private:
  bool switched_ = false;
  std::string error_;
};

/// The log line for the decision: "user" (a warning when the command keeps
/// root), with the user's name and uid.
LogEvent init_user_event(const InitUser& u);

/// As root: makes `root` (mkdir -p) and hands what root owns inside it to
/// `a`, without following symlinks, so that a root-owned bind mount, or files
/// an earlier root job left, do not lock the user out. Appends a line per
/// failure to *problems; returns the number of entries handed over.
size_t hand_cache_root(const std::string& root, const Account& a,
                       std::vector<std::string>* problems);

/// The plan's directories under `root` (the compile caches, the bytecode
/// prefix): the values of settings that name a path inside it.
std::vector<std::string> cache_dirs_in_plan(const Plan& plan, const std::string& root);

}  // namespace gpuenv
