// detect, env, explain, run.
#include "act/env_format.h"
#include "act/run.h"
#include "cli/cmd_watch.h"
#include "cli/context.h"
#include "cli/exit_codes.h"
#include "decide/decide.h"
#include "decide/health.h"
#include "model/snapshot.h"

namespace gpuenv {
namespace {

// The plan's warnings and errors, one line each on stderr: stdout stays
// what `eval` or a pipe reads.
void warn_notes(const Plan& plan) {
  for (const auto& n : plan.notes)
    if (n.severity != Severity::kInfo) print_error(n.rule + ": " + n.message);
}

}  // namespace

std::function<int()> setup_detect(CLI::App* sub, Context* ctx) {
  auto json = std::make_shared<bool>(false);
  sub->add_flag("--json", *json, "Print the machine snapshot (versioned JSON)");
  ctx->add_common_flags(sub);
  return [ctx, json] {
    ctx->common.details = *json;  // the snapshot is complete; the summary is fast
    Machine m;
    if (!ctx->load_machine(&m)) return int(kExitBadInput);
    std::string out = *json ? machine_to_json(m) : render_detect(m, ctx->style(stdout));
    std::fputs(out.c_str(), stdout);
    std::fputs(render_problems(m, ctx->style(stderr)).c_str(), stderr);
    return int(driver_fails(m) ? kExitDriverFails : kExitOk);
  };
}

std::function<int()> setup_env(CLI::App* sub, Context* ctx) {
  auto format = std::make_shared<std::string>("sh");
  sub->add_option("--format", *format, "sh (default, safe to eval or source), dotenv (docker --env-file; not for a shell), json")
      ->option_text("sh|dotenv|json");
  ctx->add_common_flags(sub);
  return [ctx, format] {
    EnvFormat f;
    if (!parse_env_format(*format, &f)) {
      print_error("--format " + *format + ": expected sh, dotenv or json");
      return int(kExitUsage);
    }
    Machine m;
    if (!ctx->load_machine(&m)) return int(kExitBadInput);
    Plan plan = decide(m, ctx->plan_options(m));
    warn_notes(plan);
    std::string out, err;
    std::vector<std::string> skipped;
    if (!format_env(plan.settings, f, &out, &err, &skipped)) {
      print_error(err);
      return int(kExitFailure);
    }
    for (const auto& name : skipped)
      print_error("warning: " + name + " left out: its value holds a newline, CR or NUL, or is not UTF-8, "
                  "which a dotenv file cannot carry (--format sh or json have it)");
    std::fputs(out.c_str(), stdout);
    return int(kExitOk);
  };
}

std::function<int()> setup_explain(CLI::App* sub, Context* ctx) {
  auto json = std::make_shared<bool>(false);
  auto f = std::make_shared<RunFlags>();
  sub->add_flag("--json", *json, "The plan as JSON");
  add_run_flags(sub, f.get());
  ctx->add_common_flags(sub);
  sub->footer("A command after the flags (or after --): also the feedback from its last watched run.");
  return [ctx, json, f] {
    Machine m;
    if (!ctx->load_machine(&m)) return int(kExitBadInput);
    Plan plan = decide(m, ctx->plan_options(m));
    warn_notes(plan);
    std::string out = *json ? plan_to_json(plan) : render_explain(plan, ctx->style(stdout));
    if (!*json) out += feedback_section(ctx, *f, ctx->command);
    std::fputs(out.c_str(), stdout);
    return int(kExitOk);
  };
}

std::function<int()> setup_run(CLI::App* sub, Context* ctx) {
  auto f = std::make_shared<RunFlags>();
  add_run_flags(sub, f.get());
  ctx->add_common_flags(sub);
  sub->footer("Everything after run's own flags (or after --) is the command, verbatim.");
  return [ctx, f] {
    if (ctx->command.empty()) {
      print_error("run: no command given; usage: gpuenv run [--] COMMAND [ARG...]");
      return int(kExitUsage);
    }
    return run_command(ctx, *f, warn_notes);
  };
}

}  // namespace gpuenv
