#include "cli/app.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "act/render/printable.h"
#include "cli/commands.h"
#include "model/exit_codes.h"
#include "sense/trace.h"
#include "sys/nearest_word.h"
#include "sys/text.h"

namespace gpuenv {
namespace {

/// Where the program of a `takes_command` subcommand starts in argv: at the
/// first argument that is not one of the subcommand's own flags (or a flag's
/// value), or right after `--`. Returns {end of gpuenv's arguments, start of
/// the program's}.
std::pair<int, int> split_command(const CLI::App* sub, int argc, char** argv, int first) {
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") return {i, i + 1};
    if (a.size() < 2 || a[0] != '-') return {i, i};
    auto eq = a.find('=');
    const CLI::Option* o = sub->get_option_no_throw(a.substr(0, eq));
    if (o && eq == std::string::npos && o->get_items_expected_max() > 0) ++i;  // its value
  }
  return {argc, argc};
}

/// Where argv names a subcommand: its first argument that is not a flag
/// (gpuenv's own flags, --help and --version, take no value); -1 if none.
int subcommand_at(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (argv[i][0] != '-') return i;
  return -1;
}

/// The command argv names, or nullptr (none, or a name that is no command).
const Command* named_command(int argc, char** argv) {
  int at = subcommand_at(argc, argv);
  if (at < 0) return nullptr;
  for (const Command& c : commands())
    if (std::string(argv[at]) == c.name) return &c;
  return nullptr;
}

/// argv's first argument that is not a flag, when only gpuenv's own flags
/// come before it: there it can be nothing but a command's name.
const char* command_word(int argc, char** argv) {
  int at = subcommand_at(argc, argv);
  for (int i = 1; i < at; ++i) {
    std::string a = argv[i];
    if (a != "-h" && a != "--help" && a != "--version") return nullptr;
  }
  return at < 0 ? nullptr : argv[at];
}

// The --log-format value among gpuenv's own arguments (argv[1..end)), read
// before CLI11 parses them so that a bad command line is reported in it.
std::string log_format_arg(int end, char** argv) {
  for (int i = 1; i < end; ++i) {
    std::string a = argv[i];
    if (a == "--log-format" && i + 1 < end) return argv[i + 1];
    if (a.rfind("--log-format=", 0) == 0) return a.substr(13);
  }
  return "";
}

// The format asked for: --log-format wins over GPUENV_LOG_FORMAT; false
// (with *err naming it) when the one that applies is neither text nor json.
bool resolve_log_format(const std::string& flag, LogFormat* out, std::string* err) {
  if (!flag.empty()) {
    if (parse_log_format(flag, out)) return true;
    *err = "--log-format " + flag + ": expected text or json";
    return false;
  }
  std::string env = env_or("GPUENV_LOG_FORMAT", "");
  if (env.empty()) *out = LogFormat::kText;
  if (env.empty() || parse_log_format(env, out)) return true;
  *err = "GPUENV_LOG_FORMAT=" + env + ": expected text or json";
  return false;
}

// As resolve_log_format, but text for a bad value: for reporting the
// errors that come before the command line is judged.
LogFormat early_log_format(const std::string& flag) {
  LogFormat f = LogFormat::kText;
  std::string ignored;
  if (parse_log_format(flag, &f) || resolve_log_format("", &f, &ignored)) return f;
  return LogFormat::kText;
}

// --log-format on a command and its own subcommands (serve jupyter|ssh).
void add_log_format(CLI::App* sub, std::string* value) {
  sub->add_option("--log-format", *value,
                  "text (default) or json: how messages and problems on stderr are written, "
                  "json as one object per line (also GPUENV_LOG_FORMAT)")
      ->option_text("text|json");
  for (CLI::App* child : sub->get_subcommands({})) add_log_format(child, value);
}

// GPUENV_TRACE's totals (sense/trace.h), as lines of the log.
void log_trace(const char* name, int calls, double ms) {
  log_event({Severity::kInfo, "trace", fmt::format("trace: {:<44} {:>4} call(s) {:>8.2f} ms", name, calls, ms),
             {{"name", name}, {"calls", calls}, {"ms", ms}}, LogEvent::Form::kLine});
}

// CLI11's message for a bad command line, which quotes the arguments.
void report_usage(const std::string& text) {
  std::string message = text;
  while (!message.empty() && message.back() == '\n') message.pop_back();
  log_event({Severity::kError, "usage", printable_lines(text), {{"message", message}}, LogEvent::Form::kVerbatim});
}

// A name that is no command: the nearest one, else the list.
int report_unknown_command(const std::string& word) {
  std::string near = nearest(word, command_names());
  std::string text = "unknown command \"" + word + "\"; " +
                     (near.empty() ? "the commands are " + join(command_names(), ", ") + " (gpuenv help says what each does)"
                                   : "did you mean \"" + near + "\"? (gpuenv help lists every command)");
  nlohmann::ordered_json fields = {{"command_word", word}};
  if (!near.empty()) fields["suggestion"] = near;
  log_message(Severity::kError, "usage", text, fields);
  return kExitUsage;
}

// The flag names `sub` takes: "--json", "-h".
std::vector<std::string> flag_names(const CLI::App* sub) {
  std::vector<std::string> out;
  for (const CLI::Option* o : sub->get_options()) {
    for (const auto& n : o->get_lnames()) out.push_back("--" + n);
    for (const auto& n : o->get_snames()) out.push_back("-" + n);
  }
  return out;
}

// The deepest command argv names under `sub` (serve's jupyter), from argv[first].
const CLI::App* deepest(const CLI::App* sub, int first, int argc, char** argv) {
  for (int i = first; i < argc; ++i)
    for (const CLI::App* child : sub->get_subcommands({}))
      if (child->get_name() == argv[i]) return deepest(child, i + 1, argc, argv);
  return sub;
}

// The first of argv[first..argc) that looks like a flag `sub` does not take.
std::string unknown_flag(const CLI::App* sub, int first, int argc, char** argv) {
  std::vector<std::string> names = flag_names(sub);
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a.size() < 2 || a[0] != '-' || a == "--") continue;
    std::string name = a.substr(0, a.find('='));
    if (std::find(names.begin(), names.end(), name) == names.end()) return name;
  }
  return "";
}

// CLI11's "The following argument was not expected: --jsn", as "detect
// does not take --jsn; did you mean --json?" when argv holds a flag the
// command does not take; CLI11's own message otherwise.
void report_parse_error(const CLI::App& app, const CLI::ParseError& e, const Command* named, int argc, char** argv) {
  std::ostringstream out, err;  // CLI11 quotes the arguments: sanitise them
  app.exit(e, out, err);
  int at = subcommand_at(argc, argv);
  const CLI::App* sub = named && at > 0 ? deepest(app.get_subcommand(named->name), at + 1, argc, argv) : nullptr;
  std::string flag = sub && dynamic_cast<const CLI::ExtrasError*>(&e) ? unknown_flag(sub, at + 1, argc, argv) : "";
  if (flag.empty()) return report_usage(out.str() + err.str());
  std::string path = sub->get_parent() && sub->get_parent()->get_parent() ? sub->get_parent()->get_name() + " " : "";
  path += sub->get_name();
  std::string near = nearest(flag, flag_names(sub));
  std::string text = path + " does not take " + flag + (near.empty() ? "" : "; did you mean " + near + "?") +
                     " (gpuenv help " + path + " lists its flags)";
  nlohmann::ordered_json fields = {{"flag", flag}};
  if (!near.empty()) fields["suggestion"] = near;
  log_message(Severity::kError, "usage", text, fields);
}

constexpr const char* kSummary =
    "gpuenv: sense the GPU machine, decide the environment PyTorch should run with, act on it.";

}  // namespace

CommandLine build_command_line(Context* ctx, const Command* only) {
  CommandLine cl{std::make_unique<CLI::App>(kSummary, "gpuenv"), {}};
  cl.app->set_version_flag("--version", std::string("gpuenv ") + GPUENV_VERSION);
  cl.app->require_subcommand(1);
  cl.app->footer("gpuenv help COMMAND lists a command's flags; gpuenv completion bash|zsh|fish, gpuenv man.");
  for (const Command& c : commands()) {
    CLI::App* sub = cl.app->add_subcommand(c.name, c.help);
    if (only && only != &c) continue;
    cl.actions.emplace_back(sub, c.setup(sub, ctx));
    add_log_format(sub, &ctx->common.log_format);
  }
  return cl;
}

int run_cli(int argc, char** argv) {
  Context ctx;
  // CLI11 parses only the subcommand argv names, so only its options are
  // built when it names one: building all of them costs the start-up
  // several times over (docs/performance.md). The others are still added, with their
  // help line, for `gpuenv --help`.
  const Command* named = named_command(argc, argv);
  configure_log(early_log_format(""), "");
  if (const char* word = command_word(argc, argv); word && !named) return report_unknown_command(word);
  CommandLine cl = build_command_line(&ctx, named);
  CLI::App& app = *cl.app;
  if (argc == 1) return std::fputs(app.help().c_str(), stdout), int(kExitOk);  // a bare gpuenv: the overview
  if (named && named->takes_command) {
    auto [end, start] = split_command(cl.actions[0].first, argc, argv, subcommand_at(argc, argv) + 1);
    ctx.command.assign(argv + start, argv + argc);
    argc = end;
  }
  configure_log(early_log_format(log_format_arg(argc, argv)), named ? named->name : "");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    report_parse_error(app, e, named, argc, argv);
    return kExitUsage;
  }
  LogFormat format = LogFormat::kText;
  std::string why;
  if (!resolve_log_format(ctx.common.log_format, &format, &why)) {
    log_message(Severity::kError, "usage", why);
    return kExitUsage;
  }
  configure_log(format, named ? named->name : "");
  trace::set_sink(log_trace);
  for (auto& [sub, action] : cl.actions)
    if (*sub) return action();
  return kExitUsage;
}

}  // namespace gpuenv
