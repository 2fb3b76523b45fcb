// CHECK(cond) for the fuzzers (src/**/*_fuzz.cc): what must hold for any
// input; a failure names the file and line and aborts, which libFuzzer
// reports with the input that made it.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace gpuenv::testing {

inline void fuzz_check(bool ok, const char* what, const char* file, int line) {
  if (ok) return;
  std::fprintf(stderr, "%s:%d: CHECK(%s) failed\n", file, line, what);
  std::abort();
}

}  // namespace gpuenv::testing

#define CHECK(cond) ::gpuenv::testing::fuzz_check((cond), #cond, __FILE__, __LINE__)
