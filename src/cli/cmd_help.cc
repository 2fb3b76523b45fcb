// gpuenv help [COMMAND], gpuenv completion bash|zsh|fish, gpuenv man: the
// command table told to a person, a shell and man(1). Each builds the whole
// command line (cli/app.h) and reads it back, so none can name a flag the
// binary does not take.
#include "act/render/command_docs.h"
#include "cli/app.h"
#include "cli/commands.h"
#include "model/exit_codes.h"
#include "sys/nearest_word.h"
#include "sys/text.h"

namespace gpuenv {
namespace {

std::vector<FlagDoc> flag_docs(const CLI::App& app) {
  std::vector<FlagDoc> out;
  for (const CLI::Option* o : app.get_options()) {
    FlagDoc f;
    for (const auto& n : o->get_snames()) f.names.push_back("-" + n);
    for (const auto& n : o->get_lnames()) f.names.push_back("--" + n);
    if (f.names.empty()) continue;  // a positional argument
    if (o->get_items_expected_max() > 0) f.value = o->get_option_text().empty() ? "VALUE" : o->get_option_text();
    f.help = o->get_description();
    out.push_back(std::move(f));
  }
  return out;
}

CommandDoc command_doc(const CLI::App& sub) {
  CommandDoc c{sub.get_name(), sub.get_description(), flag_docs(sub), {}, {}, false};
  for (const CLI::App* child : sub.get_subcommands({})) c.subcommands.push_back(command_doc(*child));
  return c;
}

/// The whole command line as plain data, every command's flags built.
ProgramDoc describe() {
  Context ctx;
  CommandLine cl = build_command_line(&ctx, nullptr);
  ProgramDoc p{"gpuenv", cl.app->get_description(), std::string("gpuenv ") + GPUENV_VERSION, flag_docs(*cl.app), {}};
  for (const Command& c : commands()) {
    CommandDoc doc = command_doc(*cl.app->get_subcommand(c.name));
    doc.takes_command = c.takes_command;
    if (doc.name == "help") doc.words = command_names();
    if (doc.name == "completion") doc.words = completion_shells();
    p.commands.push_back(std::move(doc));
  }
  return p;
}

// The help of `topic` ({} for the overview, {"serve", "jupyter"}), or an
// unknown name with the nearest one.
int print_help(const std::vector<std::string>& topic) {
  Context ctx;
  CommandLine cl = build_command_line(&ctx, nullptr);
  const CLI::App* at = cl.app.get();
  std::string path = "gpuenv";
  for (const auto& word : topic) {
    const CLI::App* next = nullptr;
    std::vector<std::string> names;
    for (const CLI::App* child : at->get_subcommands({})) {
      names.push_back(child->get_name());
      if (child->get_name() == word) next = child;
    }
    if (!next) {
      std::string near = nearest(word, names);
      log_message(Severity::kError, "usage",
                  path + " has no command \"" + word + "\"" + (near.empty() ? "" : "; did you mean \"" + near + "\"?") +
                      " (the commands are " + join(names, ", ") + ")",
                  {{"command_word", word}});
      return kExitUsage;
    }
    if (at != cl.app.get()) path += " " + at->get_name();
    at = next;
  }
  std::fputs((at == cl.app.get() ? at->help() : at->help(path)).c_str(), stdout);
  return kExitOk;
}

}  // namespace

std::function<int()> setup_help(CLI::App* sub, Context*) {
  auto topic = std::make_shared<std::vector<std::string>>();
  sub->add_option("topic", *topic, "A command (and serve's jupyter or ssh); none: the overview")->option_text("COMMAND");
  return [topic] { return print_help(*topic); };
}

std::function<int()> setup_completion(CLI::App* sub, Context*) {
  auto shell = std::make_shared<std::string>();
  sub->add_option("shell", *shell, "bash, zsh or fish")->required()->option_text("SHELL");
  sub->footer("bash: source <(gpuenv completion bash); zsh: the same after compinit, or save it as _gpuenv on "
              "$fpath; fish: gpuenv completion fish > ~/.config/fish/completions/gpuenv.fish");
  return [shell] {
    std::string script = completion_script(*shell, describe());
    if (script.empty()) {
      log_message(Severity::kError, "usage", "completion " + *shell + ": expected " + join(completion_shells(), ", "));
      return int(kExitUsage);
    }
    std::fputs(script.c_str(), stdout);
    return int(kExitOk);
  };
}

std::function<int()> setup_man(CLI::App* sub, Context*) {
  sub->footer("Read it with: gpuenv man | man -l -");
  return [] { return std::fputs(man_page(describe()).c_str(), stdout), int(kExitOk); };
}

}  // namespace gpuenv
