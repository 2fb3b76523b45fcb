// Where gpuenv's Python start-up hook (python/sitecustomize.py) is installed:
// beside the binary in a build tree (build/python/), or under
// PREFIX/lib/gpuenv/python/ when installed (the image: /usr/local).
#pragma once

#include <string>

namespace gpuenv {

inline constexpr const char* kPythonHookFile = "sitecustomize.py";

/// The first of <exe dir>/python and <exe dir>/../lib/gpuenv/python that
/// holds sitecustomize.py, normalised; "" when neither does.
std::string find_python_hook_dir(const std::string& exe_path);

/// $GPUENV_PYTHON_DIR when set, else find_python_hook_dir() of this binary:
/// the one place the TF32 rule and `run --tune` learn where the hook is.
std::string python_hook_dir();

}  // namespace gpuenv
