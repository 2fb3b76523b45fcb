#include "sense/python_hook.h"

#include <cstdlib>

#include "sense/fs.h"

namespace gpuenv {

std::string find_python_hook_dir(const std::string& exe_path) {
  if (exe_path.empty()) return "";
  std::string dir = fs::dirname(exe_path);
  for (const std::string& candidate : {fs::join(dir, "python"), fs::join(dir, "../lib/gpuenv/python")}) {
    std::string hook = fs::normalize(candidate);
    if (fs::exists(fs::join(hook, kPythonHookFile))) return hook;
  }
  return "";
}

std::string python_hook_dir() {
  const char* env = std::getenv("GPUENV_PYTHON_DIR");
  if (env != nullptr && *env != '\0') return env;
  return find_python_hook_dir(fs::executable_path());
}

}  // namespace gpuenv
