// Where gpuenv's Python start-up hook (python/sitecustomize.py) is installed:
// beside the binary in a build tree (build/python/), or under
// PREFIX/lib/gpuenv/python/ when installed (the image: /usr/local).
#pragma once

#include <string>

namespace gpuenv {

inline constexpr const char* kPythonHookFile = "sitecustomize.py";
/// The modules sitecustomize.py imports from its directory (CMakeLists.txt
/// and docker/Dockerfile install them beside it); each is checked as it is.
inline constexpr const char* kPythonHookModules[] = {"gpuenv_speed.py", "gpuenv_trainer.py", "gpuenv_precision.py"};
/// The module sitecustomize.py loads for --tune=+precision (one of kPythonHookModules).
inline constexpr const char* kPrecisionHookFile = "gpuenv_precision.py";

/// The first of <exe dir>/python and <exe dir>/../lib/gpuenv/python that
/// holds sitecustomize.py, normalised; "" when neither does.
std::string find_python_hook_dir(const std::string& exe_path);

/// Why `dir` must not go first on a job's PYTHONPATH, where every file in it
/// is imported before the job's own modules (as root, in every Ampere+ job):
/// the store's rule for its directory (store/private_dir.h, unsafe_dir:
/// owned by root or this user, no link on the way owned by another), and
/// besides, neither `dir` nor its sitecustomize.py is a symbolic link or
/// writable by group or others (a sticky bit does not help: a new file there
/// is code too), and the file is a regular file owned by root or this user;
/// so is each of kPythonHookModules that is there.
/// "" when it may.
std::string unsafe_hook_dir(const std::string& dir);

/// The hook's directory, and why one that exists was refused.
struct PythonHook {
  std::string dir;      // "" when there is none, or when it was refused
  std::string refused;  // unsafe_hook_dir()'s reason, "" when not refused
};

/// $GPUENV_PYTHON_DIR when set, else find_python_hook_dir() of this binary,
/// checked by unsafe_hook_dir(): the one place the TF32 rule and `run --tune`
/// learn where the hook is.
PythonHook python_hook();

}  // namespace gpuenv
