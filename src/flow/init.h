// `gpuenv init`'s sequence, the image's entrypoint (docs/container.md):
// choose who runs the command, sense the machine within a time limit (as
// that user), decide the plan, write it where later shells find it
// (act/init.h), hand the cache root to the user, become the user, and run
// the command under supervision, returning its exit status. Like
// flow/export.h, the sequence is handed the steps that touch the system
// (InitEnv), so a test runs the whole entrypoint with fakes;
// cli/cmd_init.cc only parses the flags into an InitRequest.
#pragma once

#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "act/init.h"
#include "act/init_user.h"
#include "act/log.h"
#include "act/supervise.h"
#include "model/machine.h"
#include "model/plan.h"
#include "sys/file_write.h"

namespace gpuenv::flow {

/// What `gpuenv init` was asked.
struct InitRequest {
  PlanFiles files;                // where the env file and the profile script go
  std::vector<std::string> argv;  // the command; empty: env.default_command()
};

/// Who runs the command, and becoming them (act/init_user.h, serve_common.h).
class InitUserSteps {
 public:
  virtual ~InitUserSteps() = default;
  /// Decides who runs argv (choose_init_user); false with *err.
  virtual bool choose(const std::vector<std::string>& argv, InitUser* out, std::string* err) = 0;
  /// Points HOME, USER, LOGNAME and SHELL at `a` (use_account_env).
  virtual void use_account_env(const Account& a) = 0;
  /// Calls `body` with this process's effective ids `a`'s when `active`
  /// (AsUser), and back after; `body` is told why switching failed ("" when
  /// it worked or was not asked for).
  virtual void as_user(const Account& a, bool active, const std::function<void(const std::string& error)>& body) = 0;
  /// Makes `dirs` (mkdir -p) and, given an `owner`, hands what root owns
  /// under `root` to it (hand_cache_root). Returns the problems.
  virtual std::vector<std::string> prepare_cache(const std::vector<std::string>& dirs, const std::string& root,
                                                 const Account* owner) = 0;
  /// Becomes `a` for good (drop_privileges); false with *err.
  virtual bool drop_privileges(const Account& a, std::string* err) = 0;
};

/// The real steps: act/init_user.h and act/serve/serve_common.h.
class SystemUserSteps : public InitUserSteps {
 public:
  bool choose(const std::vector<std::string>& argv, InitUser* out, std::string* err) override;
  void use_account_env(const Account& a) override;
  void as_user(const Account& a, bool active, const std::function<void(const std::string& error)>& body) override;
  std::vector<std::string> prepare_cache(const std::vector<std::string>& dirs, const std::string& root,
                                         const Account* owner) override;
  bool drop_privileges(const Account& a, std::string* err) override;
};

/// How sensing ended before it finished: by signal `sig`, or past its time
/// limit (sig 0). Says why and returns the status init exits with.
using SenseEnd = std::function<int(int sig)>;

/// What the sequence is handed: the real ones in a command, fakes in a test.
struct InitEnv {
  InitUserSteps* user = nullptr;
  /// Senses this machine without the store within `limit_ms`. A stop
  /// signal or the limit calls `end` and ends the process with its status
  /// (the real one: SenseGuard, then _Exit); false when the machine cannot
  /// be sensed (the reason already said).
  std::function<bool(int limit_ms, const SenseEnd& end, Machine* m)> sense;
  /// After the time limit: the store's measurements into *m, and the
  /// options the plan is decided with.
  std::function<Options(Machine* m)> plan_options;
  sys::WriteFile write = sys::write_file_atomic;  // the env file and the profile script
  std::function<const char*(const char*)> getenv = [](const char* n) { return std::getenv(n); };
  std::function<void(const std::string& name, const std::string& value)> setenv =  // the command's environment
      [](const std::string& name, const std::string& value) { ::setenv(name.c_str(), value.c_str(), 1); };
  /// Runs argv and waits for it, forwarding signals (Supervisor::run).
  std::function<ChildExit(const std::vector<std::string>& argv, std::string* err)> run;
  std::function<std::vector<std::string>()> default_command = gpuenv::default_command;
  std::function<void(const LogEvent&)> log = log_event;  // --log-format: cli/app.cc
};

/// Runs the entrypoint. Returns the command's exit status (128+signal when
/// a signal ended it, 127 or 126 when it could not be started), or before
/// it: kExitServeConfig the user cannot be used, kExitBadInput the machine
/// cannot be sensed, kExitFailure init cannot become the user; and what
/// `end` returns when sensing is cut short.
int run_init(const InitRequest& request, const InitEnv& env);

/// The real InitEnv::sense around `sense`: a SenseGuard for `limit_ms`
/// whose signal or timeout ends this process (fflush, _Exit) with what
/// `end` returns.
bool sense_within(int limit_ms, const SenseEnd& end, const std::function<bool()>& sense);

/// How long sensing may take (GPUENV_SENSE_TIMEOUT_S read through `getenv`;
/// default 60 s, far beyond what a healthy machine needs).
int sense_limit_ms(const std::function<const char*(const char*)>& getenv);

}  // namespace gpuenv::flow
