// init: the container entrypoint (docs/container.md).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "act/init.h"
#include "act/init_user.h"
#include "act/run.h"
#include "sys/signals.h"
#include "act/supervise.h"
#include "cli/commands.h"
#include "model/exit_codes.h"
#include "decide/decide.h"

namespace gpuenv {
namespace {

struct InitFlags {
  PlanFiles files;
};

// How long sensing may take before init gives up (GPUENV_SENSE_TIMEOUT_S,
// default 60 s, far beyond what a healthy machine needs).
int sense_limit_ms() {
  int seconds = std::atoi(env_or("GPUENV_SENSE_TIMEOUT_S", "60").c_str());
  return (seconds > 0 ? seconds : 60) * 1000;
}

// Runs on SenseGuard's thread: nothing to forward to yet, so init ends as the
// command would have (128+sig), or with 1 when sensing hangs.
[[noreturn]] void end_while_sensing(const std::function<void(const LogEvent&)>& log, int sig) {
  if (sig != 0) {
    log(error_event(sys::signal_name(sig) + " while sensing the machine: exiting before the command started"));
  } else {
    log(error_event("sensing the machine did not finish in " + std::to_string(sense_limit_ms() / 1000) +
                    " s (a hung NVIDIA driver or an unreadable file); nvidia-smi on the host shows whether "
                    "the driver answers; GPUENV_SENSE_TIMEOUT_S sets the limit"));
  }
  std::fflush(stderr);
  std::_Exit(sig != 0 ? kExitSignalBase + sig : kExitFailure);
}

// The plan's cache directories exist, and what root owns under the cache
// root is the user's, before the command starts. A cache root the plan
// refused (Options::cache_root_refused: "" here) is left alone.
void prepare_cache(const Plan& plan, const std::string& root, const PythonUserBase& py, const InitUser& who,
                   const std::function<void(const LogEvent&)>& log) {
  if (root.empty()) return;
  std::vector<std::string> problems;
  std::string err;
  std::vector<std::string> dirs = cache_dirs_in_plan(plan, root);
  if (!py.dir.empty()) dirs.push_back(py.dir + "/bin");  // on PATH from the start: sshd keeps it
  for (const auto& dir : dirs)
    if (!sys::make_dirs(dir, 0755, &err)) problems.push_back(err), err.clear();
  if (who.kind == InitUser::Kind::kDrop || who.kind == InitUser::Kind::kSshd)
    hand_cache_root(root, who.account, &problems);
  for (const auto& p : problems)
    log(LogEvent{Severity::kWarning, "cache", "the cache root: " + p, {{"path", root}, {"error", p}}});
}

int run_init(const Context& ctx, const InitFlags& o, std::vector<std::string> argv) {
  Supervisor supervisor;  // first: before sensing can start a thread
  auto log = [](const LogEvent& e) { log_event(e); };  // --log-format: cli/app.cc
  InitUser who;
  std::string err;
  if (!choose_init_user(argv, geteuid(), env_or("GPUENV_USER", ""), env_or(kRunAsRootVar, ""), &who,
                        &err)) {
    log(error_event(err));
    return kExitServeConfig;
  }
  bool becomes = who.kind == InitUser::Kind::kDrop || who.kind == InitUser::Kind::kSshd;
  if (becomes) use_account_env(who.account);  // the plan is the user's: HOME, the cache root
  Machine m;
  Plan plan;
  std::string cache_root;  // "" when refused
  {
    AsUser as_user(who.account, becomes);  // sense and plan with the user's rights
    if (!as_user.error().empty()) log(error_event("cannot sense as " + who.account.name + ": " + as_user.error()));
    {
      SenseGuard guard(sense_limit_ms(), [&](int sig) { end_while_sensing(log, sig); },
                       [&] { end_while_sensing(log, 0); });
      if (!ctx.load_machine_without_store(&m)) return kExitBadInput;
    }
    // After the guard: a store another process holds has its own bound (store::kStorePatience),
    // is said as such, and is no hung driver.
    ctx.read_measurements(ctx.sense_options().store_path, &m);
    Options options = ctx.plan_options(m);
    cache_root = options.cache_root;
    plan = decide(m, options);
  }
  for (const auto& e : banner_events(m, plan)) log(e);
  write_plan_files(plan, o.files, log);
  log(init_user_event(who));
  // The user's pip on the cache root; a command that keeps root gets none.
  bool runs_as_user = who.kind == InitUser::Kind::kDrop || who.kind == InitUser::Kind::kUnchanged;
  bool pip_home = runs_as_user || who.kind == InitUser::Kind::kSshd;
  auto user_base = [&] {
    return pip_home ? python_user_base(cache_root, runs_as_user, [](const char* n) { return std::getenv(n); })
                    : PythonUserBase{};
  };
  PythonUserBase py = user_base();
  prepare_cache(plan, cache_root, py, who, log);
  if (who.kind == InitUser::Kind::kDrop && !drop_privileges(who.account, &err)) {
    log(error_event("cannot become " + who.account.name + ": " + err));
    return kExitFailure;
  }
  apply_settings(plan);
  for (const auto& [name, value] : user_base().env) setenv(name.c_str(), value.c_str(), 1);
  if (argv.empty()) argv = default_command();
  log(starting_event(argv));
  err.clear();
  ChildExit exit = supervisor.run(argv, &err);
  log(exit.started ? exited_event(exit) : error_event(err));
  return exit.code;
}

}  // namespace

std::function<int()> setup_init(CLI::App* sub, Context* ctx) {
  auto o = std::make_shared<InitFlags>();
  sub->add_option("--etc-dir", o->files.etc_dir, "Where the dotenv file `env` goes (default /etc/gpuenv)")
      ->envname("GPUENV_ETC_DIR")
      ->option_text("DIR");
  sub->add_option("--profile-d", o->files.profile_d, "Where gpuenv.sh goes (default /etc/profile.d)")
      ->envname("GPUENV_PROFILE_D")
      ->option_text("DIR");
  ctx->add_common_flags(sub, kPlanFlags);
  sub->footer("Everything after init's own flags (or after --) is the command, verbatim.");
  return [ctx, o] { return run_init(*ctx, *o, ctx->command); };
}

}  // namespace gpuenv
