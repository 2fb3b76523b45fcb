#include "act/init.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "act/env_format.h"
#include "sense/fs.h"

namespace gpuenv {
namespace {

constexpr const char* kHeader =
    "# Written by `gpuenv init` for this container; `gpuenv explain` says why each is set.\n";

std::string dir_of(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool ensure_dir(const std::string& dir, std::string* err) {
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) return true;
  if (mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST) return true;
  *err = fs::errno_text("mkdir", dir);
  return false;
}

bool fill_temp(int fd, const std::string& tmp, const std::string& content, mode_t mode,
               std::string* err) {
  if (fchmod(fd, mode) != 0) *err = fs::errno_text("fchmod", tmp);
  else if (!fs::write_all(fd, content)) *err = fs::errno_text("write", tmp);
  else if (fsync(fd) != 0) *err = fs::errno_text("fsync", tmp);
  return err->empty();
}

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

bool write_file_atomic(const std::string& path, const std::string& content, mode_t mode,
                       std::string* err) {
  if (!ensure_dir(dir_of(path), err)) return false;
  // A dot-file: readers of a directory (NFD's features.d) skip it.
  std::string tmp = dir_of(path) + "/." + path.substr(path.rfind('/') + 1) + ".tmp.XXXXXX";
  int fd = mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) {
    *err = fs::errno_text("mkstemp", tmp);
    return false;
  }
  std::string e;
  bool ok = fill_temp(fd, tmp, content, mode, &e);
  close(fd);
  if (ok && rename(tmp.c_str(), path.c_str()) != 0) {
    e = fs::errno_text("rename", path);
    ok = false;
  }
  if (!ok) {
    unlink(tmp.c_str());
    *err = e;
  }
  return ok;
}

void write_plan_files(const Plan& plan, const PlanFiles& files,
                      const std::function<void(const LogEvent&)>& log) {
  auto write = [&](const std::string& path, const std::string& content) {
    std::string err;
    log(write_file_atomic(path, content, 0644, &err) ? wrote_event(path)
                                                     : write_failed_event(path, err));
  };
  std::vector<std::string> skipped;
  std::string env = render_env_file(plan, &skipped);
  for (const auto& name : skipped) log(skipped_event(files.env_file(), name));
  write(files.env_file(), env);
  std::string script, err;
  if (render_profile_script(plan, &script, &err)) write(files.profile_script(), script);
  else log(write_failed_event(files.profile_script(), err));
}

std::vector<std::string> default_command() {
  const char* shell = std::getenv("SHELL");
  if (shell && *shell && access(shell, X_OK) == 0) return {shell};
  if (access("/bin/bash", X_OK) == 0) return {"/bin/bash"};
  return {"/bin/sh"};
}

}  // namespace gpuenv
