#include "decide/run/python_flags.h"

#include <gtest/gtest.h>

namespace gpuenv {
namespace {

// Issue 35: under python3 -I, -E or -S gpuenv said the job ran under bf16
// autocast, but the hook never loaded there.
TEST(PythonFlags, TheFlagsThatKeepTheHookOut) {
  struct Row {
    std::vector<std::string> argv;
    std::string expected;
  };
  const std::string isolated = "python3 -I (isolated mode ignores PYTHONPATH)";
  const std::string no_env = "python3 -E (it ignores the PYTHON* variables, PYTHONPATH too)";
  const std::string no_site = "python3 -S (it imports no site module, so no sitecustomize)";
  std::vector<Row> rows = {
      {{"python3", "train.py"}, ""},
      {{"python3", "-I", "train.py"}, isolated},
      {{"/usr/bin/python3", "-E", "-c", "pass"}, "python3 -E (it ignores the PYTHON* variables, PYTHONPATH too)"},
      {{"python3", "-S", "-m", "torch.distributed.run", "t.py"}, no_site},
      {{"python3", "-IS", "t.py"}, isolated},
      {{"python3", "-uE", "t.py"}, no_env},
      {{"python3", "-u", "-B", "-O", "-S", "t.py"}, no_site},
      {{"python3.12", "-I", "t.py"}, "python3.12 -I (isolated mode ignores PYTHONPATH)"},
      {{"python3.13t", "-I", "t.py"}, "python3.13t -I (isolated mode ignores PYTHONPATH)"},
      {{"python", "-E", "t.py"}, "python -E (it ignores the PYTHON* variables, PYTHONPATH too)"},
      {{"pypy3", "-S", "t.py"}, "pypy3 -S (it imports no site module, so no sitecustomize)"},
      // Their arguments and the script's own flags are not Python's.
      {{"python3", "t.py", "-I"}, ""},
      {{"python3", "-c", "-I"}, ""},
      {{"python3", "-cI"}, ""},
      {{"python3", "-m", "-E"}, ""},
      {{"python3", "-W", "-I", "t.py"}, ""},
      {{"python3", "-WI", "t.py"}, ""},
      {{"python3", "-X", "-S", "t.py"}, ""},
      {{"python3", "-Ximportstime", "-E", "t.py"}, no_env},
      {{"python3", "--check-hash-based-pycs", "-I", "t.py"}, ""},
      {{"python3", "--", "-I"}, ""},
      {{"python3", "-", "-I"}, ""},
      // Other programs are not looked into.
      {{"torchrun", "-I", "t.py"}, ""},
      {{"sh", "-c", "python3 -I t.py"}, ""},
      {{"pythonista", "-I"}, ""},
      {{"python3-config", "-I"}, ""},
      {{}, ""},
      // env in front.
      {{"env", "A=1", "python3", "-I", "t.py"}, isolated},
      {{"/usr/bin/env", "-u", "X", "--", "python3", "-E", "t.py"}, no_env},
      {{"env", "python3", "t.py"}, ""},
      {{"env", "-i", "python3", "t.py"}, "env -i (the job starts with an empty environment)"},
      {{"env", "-i", "sh", "-c", "python3 t.py"}, "env -i (the job starts with an empty environment)"},
      {{"env", "PYTHONPATH=", "python3", "t.py"}, "env PYTHONPATH= (an empty PYTHONPATH)"},
      {{"env", "PYTHONPATH=", "PYTHONPATH=/x", "python3", "t.py"}, ""},
      {{"env", "PYTHONPATH=/x", "python3", "-S", "t.py"}, no_site},
  };
  for (const auto& row : rows) {
    std::string cmd;
    for (const auto& a : row.argv) cmd += a + " ";
    EXPECT_EQ(python_hook_blocked_by(row.argv), row.expected) << cmd;
  }
}

}  // namespace
}  // namespace gpuenv
