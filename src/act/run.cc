#include "act/run.h"

#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "sys/fs.h"
#include "sys/subprocess.h"

namespace gpuenv {
namespace {

bool bind_cpus(const std::vector<int>& cpus, std::string* warning) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus)
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
  if (sched_setaffinity(0, sizeof set, &set) == 0) return true;
  *warning = fs::errno_text("sched_setaffinity") + "; the command runs without the planned CPU binding";
  return false;
}

// The file execvp tried for `cmd`: cmd itself when it holds a '/', else
// the first $PATH entry where it is a regular file.
std::optional<std::string> command_file(const std::string& cmd) {
  if (cmd.find('/') != std::string::npos)
    return sys::is_regular_file(cmd) ? std::optional<std::string>(cmd) : std::nullopt;
  return sys::find_on_path(cmd, sys::search_path(), sys::is_regular_file);
}

// "/usr/bin/python3" for a file starting "#! /usr/bin/python3 -u"; "" when
// it has no #! line.
std::string shebang_interpreter(const std::string& file) {
  std::string head, err;
  if (!fs::read_head(file, 256, &head, &err) || head.rfind("#!", 0) != 0) return "";
  std::size_t begin = head.find_first_not_of(" \t", 2);
  if (begin == std::string::npos) return "";
  std::size_t end = head.find_first_of(" \t\r\n", begin);
  return head.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

}  // namespace

void apply_settings(const Plan& plan) {
  for (const auto& s : plan.settings) setenv(s.name.c_str(), s.value.c_str(), 1);
}

void apply_binding(const Plan& plan, std::string* warning) {
  if (plan.binding && !plan.binding->cpus.empty()) bind_cpus(plan.binding->cpus, warning);
}

int exec_command(const std::vector<std::string>& argv, std::string* err) {
  if (argv.empty()) {
    *err = "no command given: gpuenv run [--] COMMAND [ARG...]";
    return kExitCommandNotFound;
  }
  return exec_failure(argv[0], sys::exec(argv), err);
}

int exec_failure(const std::string& cmd, int e, std::string* err) {
  *err = "cannot run " + cmd + ": ";
  std::optional<std::string> file = e == ENOENT ? command_file(cmd) : std::nullopt;
  if (!file) {
    *err += std::strerror(e);
    if (e != ENOENT) return kExitCannotExecute;
    *err += cmd.find('/') == std::string::npos ? " (not found on PATH)" : "";
    return kExitCommandNotFound;
  }
  // ENOENT for a file that is there: what it asks to run is missing.
  std::string interpreter = shebang_interpreter(*file);
  *err += interpreter.empty()
              ? *file + " is there, but the program loader its ELF header names is missing"
              : "its interpreter " + interpreter + " (the #! line of " + *file + ") is missing";
  return kExitCannotExecute;
}

}  // namespace gpuenv
