#include "act/render/command_docs.h"

#include <fmt/format.h>

#include <set>

#include "sys/text.h"

namespace gpuenv {
namespace {

// `s` in single quotes for sh, bash, zsh and fish alike ('\'' for a quote;
// fish reads \' inside quotes, so its scripts use fish_quote).
std::string sh_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string fish_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  return out + "'";
}

// Every name of the flags that take a value, under every command: the
// word after one is its value, never a command.
std::vector<std::string> valued_flags(const ProgramDoc& p) {
  std::set<std::string> out;
  auto add = [&](const std::vector<FlagDoc>& flags) {
    for (const auto& f : flags)
      if (!f.value.empty()) out.insert(f.names.begin(), f.names.end());
  };
  add(p.flags);
  for (const auto& c : p.commands) {
    add(c.flags);
    for (const auto& s : c.subcommands) add(s.flags);
  }
  return {out.begin(), out.end()};
}

// What a command offers: its subcommands, its first argument's words, then its flags.
std::vector<std::string> offered(const std::vector<CommandDoc>& subs, const std::vector<std::string>& words,
                                 const std::vector<FlagDoc>& flags) {
  std::vector<std::string> out;
  for (const auto& s : subs) out.push_back(s.name);
  out.insert(out.end(), words.begin(), words.end());
  for (const auto& f : flags) out.insert(out.end(), f.names.begin(), f.names.end());
  return out;
}

std::string bash_case(const CommandDoc& c) {
  if (c.subcommands.empty()) return fmt::format("    {}) words={} ;;\n", sh_quote(c.name), sh_quote(join(offered({}, c.words, c.flags), " ")));
  std::string out = fmt::format("    {})\n      case $sub in\n", sh_quote(c.name));
  for (const auto& s : c.subcommands)
    out += fmt::format("        {}) words={} ;;\n", sh_quote(s.name), sh_quote(join(offered({}, s.words, s.flags), " ")));
  out += fmt::format("        *) words={} ;;\n      esac ;;\n", sh_quote(join(offered(c.subcommands, c.words, c.flags), " ")));
  return out;
}

std::string bash_script(const ProgramDoc& p) {
  std::string takes_command;
  for (const auto& c : p.commands)
    if (c.takes_command) takes_command += (takes_command.empty() ? "" : "|") + sh_quote(c.name);
  std::string out = fmt::format(
      "# bash completion for {0}, written by `{0} completion bash`.\n"
      "# Use: source <({0} completion bash), or save it in /usr/share/bash-completion/completions/{0}\n"
      "_{0}() {{\n"
      "  local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}} cmd= sub= w i words\n"
      "  local valued=' {1} '\n"
      "  [[ $valued == *\" $prev \"* ]] && return 0  # a flag's value: files, as the shell completes them\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    w=${{COMP_WORDS[i]}}\n"
      "    [[ $w == -- ]] && return 0  # the program's arguments\n"
      "    if [[ $w == -* ]]; then\n"
      "      [[ $valued == *\" $w \"* ]] && ((i++))\n"
      "      continue\n"
      "    fi\n"
      "    if [[ -z $cmd ]]; then cmd=$w; elif [[ -z $sub ]]; then sub=$w; fi\n"
      "  done\n",
      p.name, join(valued_flags(p), " "));
  if (!takes_command.empty()) out += fmt::format("  case $cmd in {}) [[ -n $sub ]] && return 0 ;; esac\n", takes_command);
  out += "  case $cmd in\n";
  out += fmt::format("    '') words={} ;;\n", sh_quote(join(offered(p.commands, {}, p.flags), " ")));
  for (const auto& c : p.commands) out += bash_case(c);
  out += "    *) return 0 ;;\n  esac\n";
  out += fmt::format("  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n}}\ncomplete -o default -o bashdefault -F _{0} {0}\n", p.name);
  return out;
}

// zsh's _describe entries: NAME:HELP, a colon in NAME escaped.
std::vector<std::string> zsh_entries(const std::vector<CommandDoc>& subs, const std::vector<std::string>& words,
                                     const std::vector<FlagDoc>& flags) {
  std::vector<std::string> out;
  auto entry = [&](const std::string& name, const std::string& help) {
    std::string n;
    for (char c : name) n += c == ':' ? std::string("\\:") : std::string(1, c);
    out.push_back(sh_quote(n + ":" + help));
  };
  for (const auto& s : subs) entry(s.name, s.help);
  for (const auto& w : words) entry(w, "");
  for (const auto& f : flags)
    for (const auto& n : f.names) entry(n, f.help);
  return out;
}

std::string zsh_list(const std::vector<std::string>& entries) { return "(\n        " + join(entries, "\n        ") + "\n      )"; }

std::string zsh_case(const CommandDoc& c) {
  if (c.subcommands.empty()) return fmt::format("    {}) cands={} ;;\n", sh_quote(c.name), zsh_list(zsh_entries({}, c.words, c.flags)));
  std::string out = fmt::format("    {})\n      case $sub in\n", sh_quote(c.name));
  for (const auto& s : c.subcommands)
    out += fmt::format("        {}) cands={} ;;\n", sh_quote(s.name), zsh_list(zsh_entries({}, s.words, s.flags)));
  out += fmt::format("        *) cands={} ;;\n      esac ;;\n", zsh_list(zsh_entries(c.subcommands, c.words, c.flags)));
  return out;
}

std::string zsh_script(const ProgramDoc& p) {
  std::vector<std::string> valued;
  for (const auto& v : valued_flags(p)) valued.push_back(sh_quote(v));
  std::string takes_command;
  for (const auto& c : p.commands)
    if (c.takes_command) takes_command += (takes_command.empty() ? "" : "|") + sh_quote(c.name);
  std::string out = fmt::format(
      "#compdef {0}\n"
      "# zsh completion for {0}, written by `{0} completion zsh`.\n"
      "# Use: source <({0} completion zsh) after compinit, or save it as _{0} on $fpath\n"
      "_{0}() {{\n"
      "  local cmd= sub= w i\n"
      "  local -a cands valued\n"
      "  valued=({1})\n"
      "  if (( ${{valued[(Ie)${{words[CURRENT-1]}}]}} )); then _files; return; fi\n"
      "  for ((i = 2; i < CURRENT; i++)); do\n"
      "    w=${{words[i]}}\n"
      "    if [[ $w == -- ]]; then _files; return; fi\n"
      "    if [[ $w == -* ]]; then\n"
      "      (( ${{valued[(Ie)$w]}} )) && ((i++))\n"
      "      continue\n"
      "    fi\n"
      "    if [[ -z $cmd ]]; then cmd=$w; elif [[ -z $sub ]]; then sub=$w; fi\n"
      "  done\n",
      p.name, join(valued, " "));
  if (!takes_command.empty())
    out += fmt::format("  case $cmd in {}) if [[ -n $sub ]]; then _files; return; fi ;; esac\n", takes_command);
  out += "  case $cmd in\n";
  out += fmt::format("    '') cands={} ;;\n", zsh_list(zsh_entries(p.commands, {}, p.flags)));
  for (const auto& c : p.commands) out += zsh_case(c);
  out += "    *) _files; return ;;\n  esac\n";
  out += fmt::format(
      "  _describe -t {0} {0} cands || _files\n}}\n"
      "if [[ ${{funcstack[1]}} == _{0} ]]; then _{0} \"$@\"; else compdef _{0} {0}; fi\n",
      p.name);
  return out;
}

// fish's `complete` options for a flag's names: -s h, -l help, -o for a
// one-dash long name.
std::string fish_names(const FlagDoc& f) {
  std::string out;
  for (const auto& n : f.names) {
    if (n.rfind("--", 0) == 0) out += " -l " + n.substr(2);
    else if (n.size() == 2) out += " -s " + n.substr(1);
    else out += " -o " + n.substr(1);
  }
  return out;
}

std::string fish_flags(const std::string& prog, const std::string& when, const std::vector<FlagDoc>& flags) {
  std::string out;
  for (const auto& f : flags)
    out += fmt::format("complete -c {} -n {}{}{} -d {}\n", prog, fish_quote(when), fish_names(f),
                       f.value.empty() ? "" : " -r -F", fish_quote(f.help));
  return out;
}

std::string fish_words(const std::string& prog, const std::string& when, const std::vector<std::string>& words) {
  if (words.empty()) return "";
  return fmt::format("complete -c {} -n {} -a {}\n", prog, fish_quote(when), fish_quote(join(words, " ")));
}

std::string fish_command(const std::string& prog, const CommandDoc& c) {
  std::string seen = "__fish_seen_subcommand_from " + c.name;
  std::string out = fmt::format("complete -c {} -n __fish_use_subcommand -a {} -d {}\n", prog, c.name, fish_quote(c.help));
  std::vector<std::string> names;
  for (const auto& s : c.subcommands) names.push_back(s.name);
  std::string before_sub = names.empty() ? seen : seen + "; and not __fish_seen_subcommand_from " + join(names, " ");
  for (const auto& s : c.subcommands) {
    out += fmt::format("complete -c {} -n {} -a {} -d {}\n", prog, fish_quote(before_sub), s.name, fish_quote(s.help));
    std::string in_sub = seen + "; and __fish_seen_subcommand_from " + s.name;
    out += fish_flags(prog, in_sub, s.flags) + fish_words(prog, in_sub, s.words);
  }
  out += fish_flags(prog, before_sub, c.flags) + fish_words(prog, before_sub, c.words);
  if (c.takes_command) out += fmt::format("complete -c {} -n {} -F\n", prog, fish_quote(seen));
  return out;
}

std::string fish_script(const ProgramDoc& p) {
  std::string out = fmt::format(
      "# fish completion for {0}, written by `{0} completion fish`.\n"
      "# Use: {0} completion fish > ~/.config/fish/completions/{0}.fish\n"
      "complete -c {0} -f\n",
      p.name);
  out += fish_flags(p.name, "__fish_use_subcommand", p.flags);
  for (const auto& c : p.commands) out += fish_command(p.name, c);
  return out;
}

// Text for roff: a backslash as \e, a dash as \-, and a line that would
// start with a control character guarded with \&.
std::string roff(const std::string& s, bool dashes = false) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += "\\e";
    else if (c == '-' && dashes) out += "\\-";
    else out += c;
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

std::string man_flags(const std::vector<FlagDoc>& flags) {
  std::string out;
  for (const auto& f : flags) {
    std::vector<std::string> names;
    for (const auto& n : f.names) names.push_back("\\fB" + roff(n, true) + "\\fR");
    out += ".TP\n" + join(names, ", ") + (f.value.empty() ? "" : " \\fI" + roff(f.value, true) + "\\fR") + "\n" +
           roff(f.help) + "\n";
  }
  return out;
}

std::string man_command(const std::string& prog, const CommandDoc& c, const std::string& parent) {
  std::string path = parent.empty() ? c.name : parent + " " + c.name;
  std::string out = fmt::format(".SS \"{} {}\"\n{}\n", prog, roff(path, true), roff(c.help));
  if (!c.words.empty()) out += ".PP\nIts argument: " + roff(join(c.words, ", ")) + ".\n";
  out += man_flags(c.flags);
  for (const auto& s : c.subcommands) out += man_command(prog, s, path);
  return out;
}

}  // namespace

const std::vector<std::string>& completion_shells() {
  static const std::vector<std::string> kShells = {"bash", "zsh", "fish"};
  return kShells;
}

std::string completion_script(const std::string& shell, const ProgramDoc& program) {
  if (shell == "bash") return bash_script(program);
  if (shell == "zsh") return zsh_script(program);
  if (shell == "fish") return fish_script(program);
  return "";
}

std::string man_page(const ProgramDoc& p) {
  std::string upper;
  for (char c : p.name) upper += char(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  std::string out = fmt::format(".TH {} 1 \"\" \"{}\" \"User Commands\"\n", upper, roff(p.version));
  std::string summary = p.summary.rfind(p.name + ": ", 0) == 0 ? p.summary.substr(p.name.size() + 2) : p.summary;
  out += fmt::format(".SH NAME\n{} \\- {}\n", p.name, roff(summary));
  out += fmt::format(".SH SYNOPSIS\n.B {}\n.I COMMAND\n.RI [ FLAGS ]\n.br\n.B {} help\n.RI [ COMMAND ]\n", p.name, p.name);
  out += ".SH DESCRIPTION\n" + roff(summary) + "\n";
  out += fmt::format(".PP\n\\fB{0} help\\fR \\fICOMMAND\\fR lists a command's flags, as \\fB{0} \\fICOMMAND\\fB \\-\\-help\\fR "
                     "does; \\fB{0} completion\\fR \\fISHELL\\fR writes a shell's completion script.\n",
                     p.name);
  out += ".SH OPTIONS\n" + man_flags(p.flags);
  out += ".SH COMMANDS\n";
  for (const auto& c : p.commands) out += man_command(p.name, c, "");
  out += ".SH EXIT STATUS\n0 success; 1 the command could not do what was asked; 2 a bad command line; 3 a file "
         "given is missing or not valid; other codes as each command says.\n";
  out += ".SH ENVIRONMENT\n.TP\n.B GPUENV_LOG_FORMAT\ntext or json, as \\fB\\-\\-log\\-format\\fR.\n"
         ".TP\n.B GPUENV_CACHE_ROOT\nthe cache root, as \\fB\\-\\-cache\\-root\\fR.\n"
         ".TP\n.B NO_COLOR\nno colour.\n";
  return out;
}

}  // namespace gpuenv
