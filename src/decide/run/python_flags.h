// Whether the Python a job's command starts can load gpuenv's start-up hook
// (python/sitecustomize.py, which site.py imports from PYTHONPATH): `python
// -I`, `-E` and `-S` each keep it out, and so do `env -i` and `env
// PYTHONPATH=` in front. Pure: the command line only. docs/precision.md.
#pragma once

#include <string>
#include <vector>

namespace gpuenv {

/// Why the Python that `argv` runs will not import gpuenv's start-up hook,
/// naming the flag: "python3 -I (isolated mode ignores PYTHONPATH)", "-E"
/// (the PYTHON* variables are ignored), "-S" (no site module, so no
/// sitecustomize), also combined ("-IS", "-uE") and before -c or -m; or the
/// `env` in front: "env -i (...)", "env PYTHONPATH= (...)". "" when it may,
/// and when the program (after `env`) is not python, python3, python3.X or
/// pypy: a shell or launcher in between is not looked into.
std::string python_hook_blocked_by(const std::vector<std::string>& argv);

}  // namespace gpuenv
