#include "act/init.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "act/render/env_format.h"
#include "sys/fs.h"

namespace gpuenv {
namespace {

constexpr const char* kHeader =
    "# Written by `gpuenv init` for this container; `gpuenv explain` says why each is set.\n";

}  // namespace

std::string render_env_file(const Plan& plan, std::vector<std::string>* skipped) {
  std::string out, err;
  if (!format_env(plan.settings, EnvFormat::kDotenv, &out, &err, skipped)) return kHeader;
  return kHeader + out;  // out starts with kDotenvHeader: what reads this file
}

bool render_profile_script(const Plan& plan, std::string* out, std::string* err) {
  std::string body;
  if (!format_env(plan.settings, EnvFormat::kSh, &body, err)) return false;
  *out = kHeader + body;
  return true;
}

void write_plan_files(const Plan& plan, const PlanFiles& files, const std::function<void(const LogEvent&)>& log,
                      const sys::WriteFile& write_file) {
  auto write = [&](const std::string& path, const std::string& content) {
    std::string err;
    log(write_file(path, content, 0644, &err) ? wrote_event(path) : write_failed_event(path, err));
  };
  std::vector<std::string> skipped;
  std::string env = render_env_file(plan, &skipped);
  for (const auto& name : skipped) log(skipped_event(files.env_file(), name));
  write(files.env_file(), env);
  std::string script, err;
  if (render_profile_script(plan, &script, &err)) write(files.profile_script(), script);
  else log(write_failed_event(files.profile_script(), err));
}

PythonUserBase python_user_base(const std::string& cache_root, bool bin_first,
                                const std::function<const char*(const char*)>& get) {
  PythonUserBase out;
  const char* set = get("PYTHONUSERBASE");
  if (cache_root.empty() || (set && *set)) return out;
  out.dir = (cache_root.back() == '/' ? cache_root : cache_root + "/") + "pip";
  out.env.emplace_back("PYTHONUSERBASE", out.dir);
  const char* pep668 = get("PIP_BREAK_SYSTEM_PACKAGES");
  if (!pep668 || !*pep668) out.env.emplace_back("PIP_BREAK_SYSTEM_PACKAGES", "1");
  const char* path = get("PATH");
  std::string bin = out.dir + "/bin", rest = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
  out.env.emplace_back("PATH", bin_first ? bin + ":" + rest : rest + ":" + bin);
  return out;
}

std::vector<std::string> default_command() {
  const char* shell = std::getenv("SHELL");
  if (shell && *shell && access(shell, X_OK) == 0) return {shell};
  if (access("/bin/bash", X_OK) == 0) return {"/bin/bash"};
  return {"/bin/sh"};
}

}  // namespace gpuenv
