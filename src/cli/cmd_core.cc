// detect, env, explain, run.
#include "act/render/env_format.h"
#include "act/render/report.h"
#include "act/run.h"
#include "cli/cmd_run.h"
#include "cli/context.h"
#include "cli/commands.h"
#include "sense/trace.h"
#include "sys/terminal.h"
#include "model/exit_codes.h"
#include "decide/decide.h"
#include "decide/health.h"

namespace gpuenv {
namespace {

// A line "gpuenv: TEXT" of any level, without log_message's "warning: ":
// how the plan's notes and run's binding warning have always read.
void log_line(Severity level, const std::string& event, const std::string& text,
              nlohmann::ordered_json fields) {
  fields["message"] = text;
  log_event({level, event, printable(text), std::move(fields), LogEvent::Form::kLine});
}

// The plan's warnings and errors, one line each on stderr: stdout stays
// what `eval` or a pipe reads. "note", as init reports them.
void warn_notes(const Plan& plan) {
  for (const auto& n : plan.notes)
    if (n.severity != Severity::kInfo)
      log_line(n.severity, "note", n.rule + ": " + n.message, {{"rule", n.rule}});
}

}  // namespace

std::function<int()> setup_detect(CLI::App* sub, Context* ctx) {
  auto json = std::make_shared<bool>(false);
  sub->add_flag("--json", *json, "Print the machine snapshot (versioned JSON)");
  ctx->add_common_flags(sub, kSensingFlags | kFlagNoColor);
  return [ctx, json] {
    ctx->common.details = *json;  // the snapshot is complete; the summary is fast
    // The summary shows no measurements: it leaves the store unread (about 1 ms after NVML's queries).
    Machine m;
    if (!(*json ? ctx->load_machine(&m) : ctx->load_machine_without_store(&m))) return int(kExitBadInput);
    std::string out = format_report(DetectReport{m}, format_of(*json), ctx->style(stdout));
    std::fputs(out.c_str(), stdout);
    for (const auto& e : problem_events(m, ctx->style(stderr))) log_event(e);
    return int(driver_fails(m) ? kExitDriverFails : kExitOk);
  };
}

std::function<int()> setup_env(CLI::App* sub, Context* ctx) {
  auto format = std::make_shared<std::string>("sh");
  auto json = std::make_shared<bool>(false);
  CLI::Option* format_opt =
      sub->add_option("--format", *format, "sh (default, safe to eval or source), dotenv (docker --env-file; not for a shell), json")
          ->option_text("sh|dotenv|json");
  sub->add_flag("--json", *json, "The same as --format json")->excludes(format_opt);
  ctx->add_common_flags(sub, kPlanFlags);
  return [ctx, format, json] {
    EnvFormat f;
    if (*json) *format = "json";
    if (!parse_env_format(*format, &f)) {
      log_message(Severity::kError, "usage", "--format " + *format + ": expected sh, dotenv or json");
      return int(kExitUsage);
    }
    Machine m;
    if (!ctx->load_machine(&m)) return int(kExitBadInput);
    Plan plan;
    std::string out, err;
    std::vector<std::string> skipped;
    bool formatted;
    {
      trace::Scope t("env: the plan's options, decide, format (after sensing)");
      plan = decide(m, ctx->plan_options(m));
      formatted = format_env(plan.settings, f, &out, &err, &skipped);
    }
    if (trace::enabled()) trace::flush();
    warn_notes(plan);
    if (!formatted) {
      print_error(err);
      return int(kExitFailure);
    }
    for (const auto& name : skipped)
      log_message(Severity::kWarning, "skipped",
                  name + " left out: its value holds a newline, CR or NUL, or is not UTF-8, "
                         "which a dotenv file cannot carry (--format sh or json have it)",
                  {{"name", name}});
    std::fputs(out.c_str(), stdout);
    return int(kExitOk);
  };
}

std::function<int()> setup_explain(CLI::App* sub, Context* ctx) {
  auto json = std::make_shared<bool>(false);
  auto wide = std::make_shared<bool>(false);
  auto f = std::make_shared<RunFlags>();
  sub->add_flag("--json", *json, "The plan as JSON");
  sub->add_flag("--wide", *wide, "Every value whole, each row on one line (by default a terminal's width, or "
                                 "$COLUMNS, is fitted: long values shortened, WHY wrapped)");
  add_run_flags(sub, f.get());
  ctx->add_common_flags(sub, kPlanFlags | kFlagNoColor);
  sub->footer("A command after the flags (or after --): also the feedback from its last watched run.");
  return [ctx, json, wide, f] {
    Machine m;
    if (!ctx->load_machine(&m)) return int(kExitBadInput);
    Plan plan = decide(m, ctx->plan_options(m));
    warn_notes(plan);
    Feedback feedback = read_feedback(ctx, *f, ctx->command);
    ExplainReport report{plan, *wide ? 0 : terminal_columns(stdout), &feedback};
    std::string out = format_report(report, format_of(*json), ctx->style(stdout));
    std::fputs(out.c_str(), stdout);
    return int(kExitOk);
  };
}

std::function<int()> setup_run(CLI::App* sub, Context* ctx) {
  auto f = std::make_shared<RunFlags>();
  add_run_flags(sub, f.get());
  ctx->add_common_flags(sub, kPlanFlags);
  sub->footer("Everything after run's own flags (or after --) is the command, verbatim.");
  return [ctx, f] {
    if (ctx->command.empty()) {
      log_message(Severity::kError, "usage", "run: no command given; usage: gpuenv run [--] COMMAND [ARG...]");
      return int(kExitUsage);
    }
    return run_command(ctx, *f, warn_notes);
  };
}

}  // namespace gpuenv
