// init: the container entrypoint (docs/container.md).
#include "act/init.h"
#include "act/run.h"
#include "act/supervise.h"
#include "cli/cmd_container.h"
#include "cli/exit_codes.h"
#include "decide/decide.h"

namespace gpuenv {
namespace {

struct InitFlags {
  std::string log_format = "text";
  PlanFiles files;
};

int run_init(const Context& ctx, const InitFlags& o, std::vector<std::string> argv) {
  Supervisor supervisor;  // first: before sensing can start a thread
  LogFormat format = LogFormat::kText;
  parse_log_format(o.log_format, &format);
  auto log = [format](const LogEvent& e) {
    std::fputs(render_event(e, format, rfc3339_now()).c_str(), stderr);
  };
  Machine m;
  if (!ctx.load_machine(&m)) return kExitBadInput;
  Plan plan = decide(m, ctx.plan_options(m));
  for (const auto& e : banner_events(m, plan)) log(e);
  write_plan_files(plan, o.files, log);
  apply_settings(plan);
  if (argv.empty()) argv = default_command();
  log(starting_event(argv));
  std::string err;
  ChildExit exit = supervisor.run(argv, &err);
  log(exit.started ? exited_event(exit) : error_event(err));
  return exit.code;
}

}  // namespace

std::function<int()> setup_init(CLI::App* sub, Context* ctx) {
  auto o = std::make_shared<InitFlags>();
  sub->add_option("--log-format", o->log_format, "text (default): a short banner; json: one object per line")
      ->check(CLI::IsMember({"text", "json"}))
      ->envname("GPUENV_LOG_FORMAT")
      ->option_text("text|json");
  sub->add_option("--etc-dir", o->files.etc_dir, "Where the dotenv file `env` goes (default /etc/gpuenv)")
      ->envname("GPUENV_ETC_DIR")
      ->option_text("DIR");
  sub->add_option("--profile-d", o->files.profile_d, "Where gpuenv.sh goes (default /etc/profile.d)")
      ->envname("GPUENV_PROFILE_D")
      ->option_text("DIR");
  ctx->add_common_flags(sub);
  sub->footer("Everything after init's own flags (or after --) is the command, verbatim.");
  return [ctx, o] { return run_init(*ctx, *o, ctx->command); };
}

}  // namespace gpuenv
