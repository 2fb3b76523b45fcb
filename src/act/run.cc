#include "act/run.h"

#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace gpuenv {
namespace {

bool bind_cpus(const std::vector<int>& cpus, std::string* warning) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus)
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
  if (sched_setaffinity(0, sizeof set, &set) == 0) return true;
  *warning = std::string("sched_setaffinity: ") + std::strerror(errno) +
             "; the command runs without the planned CPU binding";
  return false;
}

}  // namespace

void apply_settings(const Plan& plan) {
  for (const auto& s : plan.settings) setenv(s.name.c_str(), s.value.c_str(), 1);
}

int exec_with_plan(const Plan& plan, const std::vector<std::string>& argv, std::string* warning,
                   std::string* err) {
  if (argv.empty()) {
    *err = "no command given: gpuenv run [--] COMMAND [ARG...]";
    return kExitCommandNotFound;
  }
  apply_settings(plan);
  if (plan.binding && !plan.binding->cpus.empty()) bind_cpus(plan.binding->cpus, warning);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execvp(args[0], args.data());
  int e = errno;
  *err = "cannot run " + argv[0] + ": " + std::strerror(e);
  if (e == ENOENT) {
    *err += " (not found on PATH)";
    return kExitCommandNotFound;
  }
  return kExitCannotExecute;
}

}  // namespace gpuenv
