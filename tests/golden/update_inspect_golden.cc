// Rewrites tests/golden/inspect.txt from what `gpuenv inspect` prints now:
// a step of its own (`cmake --build build --target update-inspect-golden`),
// never part of a test run. Review the diff before committing it; the
// counts in it are checked against cuobjdump (tests/inspect_oracle_test.cc).
#include <fstream>
#include <iostream>

#include "golden/inspect_runs.h"

int main() {
  std::ofstream out(gpuenv::golden::kGolden, std::ios::binary);
  out << gpuenv::golden::all_runs();
  if (!out.flush()) {
    std::cerr << "update_inspect_golden: cannot write " << gpuenv::golden::kGolden << "\n";
    return 1;
  }
  std::cout << "wrote " << gpuenv::golden::kGolden << ": review `git diff` before committing\n";
  return 0;
}
