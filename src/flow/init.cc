#include "flow/init.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "act/serve/serve_common.h"
#include "decide/decide.h"
#include "model/exit_codes.h"
#include "sys/env.h"
#include "sys/signals.h"

namespace gpuenv::flow {
namespace {

bool becomes_user(const InitUser& who) {
  return who.kind == InitUser::Kind::kDrop || who.kind == InitUser::Kind::kSshd;
}

// Nothing to forward to yet, so init ends as the command would have
// (128+sig), or with 1 when sensing hangs.
int end_while_sensing(const InitEnv& env, int limit_ms, int sig) {
  if (sig != 0) {
    env.log(error_event(sys::signal_name(sig) + " while sensing the machine: exiting before the command started"));
    return kExitSignalBase + sig;
  }
  env.log(error_event("sensing the machine did not finish in " + std::to_string(limit_ms / 1000) +
                      " s (a hung NVIDIA driver or an unreadable file); nvidia-smi on the host shows whether "
                      "the driver answers; GPUENV_SENSE_TIMEOUT_S sets the limit"));
  return kExitFailure;
}

// The machine and the plan, sensed and decided with the user's rights.
struct Planned {
  Machine machine;
  Plan plan;
  std::string cache_root;  // "" when refused
};

int plan_as_user(const InitEnv& env, const InitUser& who, Planned* out) {
  int code = kExitOk;
  int limit_ms = sense_limit_ms(env.getenv);
  env.user->as_user(who.account, becomes_user(who), [&](const std::string& error) {
    if (!error.empty()) env.log(error_event("cannot sense as " + who.account.name + ": " + error));
    SenseEnd end = [&env, limit_ms](int sig) { return end_while_sensing(env, limit_ms, sig); };
    if (!env.sense(limit_ms, end, &out->machine)) return void(code = kExitBadInput);
    // After the time limit: a store another process holds has its own bound
    // (store::kStorePatience), is said as such, and is no hung driver.
    Options options = env.plan_options(&out->machine);
    out->cache_root = options.cache_root;
    out->plan = decide(out->machine, options);
  });
  return code;
}

// The plan's cache directories exist, and what root owns under the cache
// root is the user's, before the command starts. A cache root the plan
// refused (Options::cache_root_refused: "" here) is left alone.
void prepare_cache(const InitEnv& env, const Planned& p, const PythonUserBase& py, const InitUser& who) {
  if (p.cache_root.empty()) return;
  std::vector<std::string> dirs = cache_dirs_in_plan(p.plan, p.cache_root);
  if (!py.dir.empty()) dirs.push_back(py.dir + "/bin");  // on PATH from the start: sshd keeps it
  const Account* owner = becomes_user(who) ? &who.account : nullptr;
  for (const auto& problem : env.user->prepare_cache(dirs, p.cache_root, owner))
    env.log(LogEvent{Severity::kWarning, "cache", "the cache root: " + problem,
                     {{"path", p.cache_root}, {"error", problem}}});
}

// The user's pip on the cache root; a command that keeps root gets none.
PythonUserBase user_base(const InitEnv& env, const Planned& p, const InitUser& who) {
  bool runs_as_user = who.kind == InitUser::Kind::kDrop || who.kind == InitUser::Kind::kUnchanged;
  if (!runs_as_user && who.kind != InitUser::Kind::kSshd) return {};
  return python_user_base(p.cache_root, runs_as_user, env.getenv);
}

// Becomes the user, sets the plan and the user's pip, and runs the command.
int run_command(const InitRequest& req, const InitEnv& env, const Planned& p, const InitUser& who) {
  std::string err;
  if (who.kind == InitUser::Kind::kDrop && !env.user->drop_privileges(who.account, &err)) {
    env.log(error_event("cannot become " + who.account.name + ": " + err));
    return kExitFailure;
  }
  for (const Setting& s : p.plan.settings) env.setenv(s.name, s.value);
  for (const auto& [name, value] : user_base(env, p, who).env) env.setenv(name, value);  // read as the user
  std::vector<std::string> argv = req.argv.empty() ? env.default_command() : req.argv;
  env.log(starting_event(argv));
  err.clear();
  ChildExit exit = env.run(argv, &err);
  env.log(exit.started ? exited_event(exit) : error_event(err));
  return exit.code;
}

}  // namespace

int sense_limit_ms(const std::function<const char*(const char*)>& getenv) {
  const char* text = getenv("GPUENV_SENSE_TIMEOUT_S");
  int seconds = text && *text ? std::atoi(text) : 60;
  return (seconds > 0 ? seconds : 60) * 1000;
}

int run_init(const InitRequest& req, const InitEnv& env) {
  InitUser who;
  std::string err;
  if (!env.user->choose(req.argv, &who, &err)) {
    env.log(error_event(err));
    return kExitServeConfig;
  }
  if (becomes_user(who)) env.user->use_account_env(who.account);  // the plan is the user's: HOME, the cache root
  Planned p;
  if (int code = plan_as_user(env, who, &p)) return code;
  for (const auto& e : banner_events(p.machine, p.plan)) env.log(e);
  write_plan_files(p.plan, req.files, env.log, env.write);
  env.log(init_user_event(who));
  prepare_cache(env, p, user_base(env, p, who), who);
  return run_command(req, env, p, who);
}

bool SystemUserSteps::choose(const std::vector<std::string>& argv, InitUser* out, std::string* err) {
  return choose_init_user(argv, geteuid(), env_or("GPUENV_USER", ""), env_or(kRunAsRootVar, ""), out, err);
}

void SystemUserSteps::use_account_env(const Account& a) { gpuenv::use_account_env(a); }

void SystemUserSteps::as_user(const Account& a, bool active,
                              const std::function<void(const std::string& error)>& body) {
  AsUser as(a, active);
  body(as.error());
}

std::vector<std::string> SystemUserSteps::prepare_cache(const std::vector<std::string>& dirs,
                                                        const std::string& root, const Account* owner) {
  std::vector<std::string> problems;
  std::string err;
  for (const auto& dir : dirs)
    if (!sys::make_dirs(dir, 0755, &err)) problems.push_back(err), err.clear();
  if (owner) hand_cache_root(root, *owner, &problems);
  return problems;
}

bool SystemUserSteps::drop_privileges(const Account& a, std::string* err) {
  return gpuenv::drop_privileges(a, err);
}

bool sense_within(int limit_ms, const SenseEnd& end, const std::function<bool()>& sense) {
  auto exit_with = [&end](int sig) {
    int code = end(sig);
    std::fflush(stderr);
    std::_Exit(code);
  };
  SenseGuard guard(limit_ms, exit_with, [&exit_with] { exit_with(0); });
  return sense();
}

}  // namespace gpuenv::flow
