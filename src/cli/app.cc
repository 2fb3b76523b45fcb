#include "cli/app.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "act/env_format.h"
#include "act/report.h"
#include "act/run.h"
#include "cli/exit_codes.h"
#include "decide/decide.h"
#include "model/env_names.h"
#include "model/snapshot.h"
#include "sense/sense.h"

namespace gpuenv {
namespace {

/// Flags every subcommand takes.
struct Common {
  std::string machine_file;  // --machine
  bool cuda = false;         // --cuda
  bool override_user = false;
  bool ptx = false;
  std::string cache_root;
  bool no_color = false;
};

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

void add_common(CLI::App* sub, Common* c) {
  sub->add_option("--machine", c->machine_file,
                  "Work from a snapshot (gpuenv detect --json) instead of this machine")
      ->option_text("FILE");
  sub->add_flag("--cuda", c->cuda, "Also query the CUDA driver (cuInit: slower)");
  sub->add_flag("--override", c->override_user, "Replace variables you already set");
  sub->add_flag("--ptx", c->ptx, "Add +PTX to TORCH_CUDA_ARCH_LIST");
  sub->add_option("--cache-root", c->cache_root,
                  "Persistent cache root (default: $GPUENV_CACHE_ROOT, $XDG_CACHE_HOME/gpuenv, ~/.cache/gpuenv)")
      ->option_text("DIR");
  sub->add_flag("--no-color", c->no_color, "No ANSI colour (also: NO_COLOR)");
}

Style style_for(const Common& c, FILE* stream) {
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  bool color = !c.no_color && isatty(fileno(stream)) && !(no_color && *no_color) &&
               !(term && std::string(term) == "dumb");
  return {color};
}

void error(const std::string& msg) { std::fprintf(stderr, "gpuenv: %s\n", msg.c_str()); }

SenseOptions sense_options(const Common& c) {
  SenseOptions o;
  o.with_cuda = c.cuda;
  o.nvml_library = env_or("GPUENV_NVML_LIBRARY", o.nvml_library);
  o.cuda_library = env_or("GPUENV_CUDA_LIBRARY", o.cuda_library);
  return o;
}

/// The Machine: sensed live, or read from --machine FILE.
bool load_machine(const Common& c, Machine* m) {
  if (c.machine_file.empty()) {
    *m = sense_machine(sense_options(c));
    return true;
  }
  std::ifstream in(c.machine_file, std::ios::binary);
  if (!in) {
    error("cannot read " + c.machine_file + ": " + std::strerror(errno) +
          "; pass a snapshot written by `gpuenv detect --json > FILE`");
    return false;
  }
  std::stringstream buf;
  buf << in.rdbuf();
  std::string err;
  if (!machine_from_json(buf.str(), m, &err)) {
    error(c.machine_file + ": " + err);
    return false;
  }
  return true;
}

std::string cache_root(const Common& c) {
  if (!c.cache_root.empty()) return c.cache_root;
  std::string root = env_or("GPUENV_CACHE_ROOT", "");
  if (!root.empty()) return root;
  std::string xdg = env_or("XDG_CACHE_HOME", "");
  if (!xdg.empty()) return xdg + "/gpuenv";
  std::string home = env_or("HOME", "");
  return home.empty() ? "" : home + "/.cache/gpuenv";
}

/// The snapshot's recorded variables with the live process's on top.
Options plan_options(const Common& c, const Machine& m) {
  Options o;
  o.ptx = c.ptx;
  o.override_user = c.override_user;
  o.cache_root = cache_root(c);
  o.env = m.env;
  for (const auto& name : steering_env_names())
    if (const char* v = std::getenv(name.c_str())) o.env[name] = v;
  return o;
}

int cmd_detect(const Common& c, bool json) {
  Machine m;
  if (!load_machine(c, &m)) return kExitBadInput;
  if (json) std::fputs(machine_to_json(m).c_str(), stdout);
  else std::fputs(render_detect(m, style_for(c, stdout)).c_str(), stdout);
  return kExitOk;
}

int cmd_env(const Common& c, const std::string& format_name) {
  EnvFormat format;
  if (!parse_env_format(format_name, &format)) {
    error("--format " + format_name + ": expected sh, dotenv or json");
    return kExitUsage;
  }
  Machine m;
  if (!load_machine(c, &m)) return kExitBadInput;
  Plan plan = decide(m, plan_options(c, m));
  std::string out, err;
  if (!format_env(plan.settings, format, &out, &err)) {
    error(err);
    return kExitFailure;
  }
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

int cmd_explain(const Common& c, bool json) {
  Machine m;
  if (!load_machine(c, &m)) return kExitBadInput;
  Plan plan = decide(m, plan_options(c, m));
  if (json) std::fputs(plan_to_json(plan).c_str(), stdout);
  else std::fputs(render_explain(plan, style_for(c, stdout)).c_str(), stdout);
  return kExitOk;
}

int cmd_run(const Common& c, const std::vector<std::string>& argv) {
  if (argv.empty()) {
    error("run: no command given; usage: gpuenv run [--] COMMAND [ARG...]");
    return kExitUsage;
  }
  Machine m;
  if (!load_machine(c, &m)) return kExitBadInput;
  Plan plan = decide(m, plan_options(c, m));
  for (const auto& n : plan.notes)
    if (n.severity != Severity::kInfo) error(n.rule + ": " + n.message);
  std::string warning, err;
  int code = exec_with_plan(plan, argv, &warning, &err);
  if (!warning.empty()) error(warning);
  error(err);
  return code;
}

}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App app{"gpuenv: sense the GPU machine, decide the environment PyTorch should run with, act on it.",
               "gpuenv"};
  app.set_version_flag("--version", std::string("gpuenv ") + GPUENV_VERSION);
  app.require_subcommand(1);
  Common common;
  bool json = false;
  std::string format = "sh";
  std::vector<std::string> command;

  auto* detect = app.add_subcommand("detect", "Show what was sensed: GPUs, driver, host");
  detect->add_flag("--json", json, "Print the machine snapshot (versioned JSON)");
  add_common(detect, &common);

  auto* env = app.add_subcommand("env", "Print the environment to use (eval \"$(gpuenv env)\")");
  env->add_option("--format", format, "sh (default, safe to eval), dotenv (docker --env-file), json")
      ->option_text("sh|dotenv|json");
  add_common(env, &common);

  auto* explain = app.add_subcommand("explain", "Show each setting with the reason for it");
  explain->add_flag("--json", json, "The plan as JSON");
  add_common(explain, &common);

  auto* run = app.add_subcommand("run", "Run a command under the environment: gpuenv run [--] CMD ...");
  add_common(run, &common);
  run->add_option("command", command, "The command and its arguments")->option_text("CMD...");
  run->prefix_command();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  if (*detect) return cmd_detect(common, json);
  if (*env) return cmd_env(common, format);
  if (*explain) return cmd_explain(common, json);
  if (*run) {
    for (const auto& extra : run->remaining()) command.push_back(extra);
    if (!command.empty() && command.front() == "--") command.erase(command.begin());
    return cmd_run(common, command);
  }
  return kExitUsage;
}

}  // namespace gpuenv
