// init: the container entrypoint (docs/container.md). The sequence is
// flow/init.h's; this file parses the flags into its request and hands it
// the real environment: the user steps, sensing under its time limit, the
// Supervisor that runs the command.
#include "act/supervise.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "flow/init.h"

namespace gpuenv {
namespace {

int run_init(const Context& ctx, const flow::InitRequest& request) {
  Supervisor supervisor;  // first: before sensing can start a thread
  flow::SystemUserSteps user;
  flow::InitEnv env;
  env.user = &user;
  env.sense = [&ctx](int limit_ms, const flow::SenseEnd& end, Machine* m) {
    return flow::sense_within(limit_ms, end, [&] { return ctx.load_machine_without_store(m); });
  };
  env.plan_options = [&ctx](Machine* m) {
    ctx.read_measurements(ctx.sense_options().store_path, m);
    return ctx.plan_options(*m);
  };
  env.run = [&supervisor](const std::vector<std::string>& argv, std::string* err) {
    return supervisor.run(argv, err);
  };
  return flow::run_init(request, env);
}

}  // namespace

std::function<int()> setup_init(CLI::App* sub, Context* ctx) {
  auto o = std::make_shared<flow::InitRequest>();
  sub->add_option("--etc-dir", o->files.etc_dir, "Where the dotenv file `env` goes (default /etc/gpuenv)")
      ->envname("GPUENV_ETC_DIR")
      ->option_text("DIR");
  sub->add_option("--profile-d", o->files.profile_d, "Where gpuenv.sh goes (default /etc/profile.d)")
      ->envname("GPUENV_PROFILE_D")
      ->option_text("DIR");
  ctx->add_common_flags(sub, kPlanFlags);
  sub->footer("Everything after init's own flags (or after --) is the command, verbatim.");
  return [ctx, o] {
    o->argv = ctx->command;
    return run_init(*ctx, *o);
  };
}

}  // namespace gpuenv
