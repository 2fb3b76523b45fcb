#include "decide/run/python_flags.h"

#include <cstring>

namespace gpuenv {
namespace {

std::string base_name(const std::string& path) {
  std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// python, python3, python3.12, python3.13t (free-threaded), pypy3.
bool is_python(const std::string& program) {
  std::string name = base_name(program);
  for (const char* stem : {"python", "pypy"}) {
    if (name.rfind(stem, 0) != 0) continue;
    std::string rest = name.substr(std::strlen(stem));
    if (!rest.empty() && rest.back() == 't') rest.pop_back();
    return rest.find_first_not_of("0123456789.") == std::string::npos;
  }
  return false;
}

const char* flag_effect(char flag) {
  switch (flag) {
    case 'I': return "isolated mode ignores PYTHONPATH";
    case 'E': return "it ignores the PYTHON* variables, PYTHONPATH too";
    case 'S': return "it imports no site module, so no sitecustomize";
    default: return nullptr;
  }
}

// The first of -I, -E, -S among Python's options from args[i] on, 0 when
// none: they end at the script, "-", "--", or -c and -m (whose argument
// follows); -W and -X take an argument, in the same word or the next.
char blocking_flag(const std::vector<std::string>& args, std::size_t i) {
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() < 2 || a[0] != '-' || a == "--") return 0;
    if (a[1] == '-') {
      if (a == "--check-hash-based-pycs") ++i;
      continue;
    }
    for (std::size_t j = 1; j < a.size(); ++j) {
      if (flag_effect(a[j])) return a[j];
      if (a[j] == 'c' || a[j] == 'm') return 0;
      if (a[j] == 'W' || a[j] == 'X') {
        if (j + 1 == a.size()) ++i;
        break;
      }
    }
  }
  return 0;
}

// `env [-i] [-u NAME] [-C DIR] [NAME=VALUE]... COMMAND`: where COMMAND is,
// and in *why what env does that keeps the hook out of every Python below it.
std::size_t after_env(const std::vector<std::string>& argv, std::string* why) {
  std::size_t i = 1;
  for (; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "-i" || a == "-" || a == "--ignore-environment") *why = "env -i (the job starts with an empty environment)";
    else if (a == "-u" || a == "-C") ++i;
    else if (a == "--") return i + 1;
    else if (a.rfind("PYTHONPATH=", 0) == 0 && why->rfind("env -i", 0) != 0)
      *why = a.size() == 11 ? "env PYTHONPATH= (an empty PYTHONPATH)" : "";
    else if (a[0] != '-' && a.find('=') == std::string::npos) break;
  }
  return i;
}

}  // namespace

std::string python_hook_blocked_by(const std::vector<std::string>& argv) {
  if (argv.empty()) return "";
  std::string why;
  std::size_t program = base_name(argv[0]) == "env" ? after_env(argv, &why) : 0;
  if (program >= argv.size() || !is_python(argv[program])) return why;
  char flag = blocking_flag(argv, program + 1);
  if (!flag) return why;
  return base_name(argv[program]) + " -" + flag + " (" + flag_effect(flag) + ")";
}

}  // namespace gpuenv
