// The runs of `gpuenv inspect` that tests/golden/inspect.txt holds: every
// committed fixture (tests/fatbins/) on machines that cover each verdict,
// text and JSON, each as "$ gpuenv ARGS", "exit N" and its stdout.
// inspect_golden_test.cc compares them with the file; update_inspect_golden
// (its own build target, never a test) rewrites the file.
#pragma once

#include <string>
#include <vector>

#include "process.h"
#include "test_paths.h"

namespace gpuenv::golden {

inline const std::string kTests = test_paths::tests_dir();
inline const std::string kGolden = kTests + "/golden/inspect.txt";

inline const char* const kFixtures[] = {"compressed.fatbin", "rdc_sm80.o",   "sm100f.fatbin",
                                        "sm75_sm86.o",       "sm80.cubin",   "sm80_sm90_ptx90.fatbin",
                                        "sm89_ptx89.so",     "sm90a.fatbin", "kernel.cu"};
inline const char* const kTextMachines[] = {
    "h200", "a100x8-nvlink", "b200x8",   "rtx5090", "rtx3090-rtx4090", "jetson-orin",
    "t4",   "gtx1080",       "a100-mig", "none"};
inline const char* const kJsonMachines[] = {"h200", "rtx3090-rtx4090", "jetson-orin", "none"};

// GPUENV_TESTS_DIR as "tests", so the file does not depend on the checkout.
inline std::string relative(std::string s) {
  for (std::size_t at; (at = s.find(kTests)) != std::string::npos;)
    s.replace(at, kTests.size(), "tests");
  return s;
}

inline std::string record(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"inspect"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = testing::run_gpuenv(argv);
  std::string cmd = "$ gpuenv";
  for (const auto& a : argv) cmd += " " + a;
  return relative(cmd + "\nexit " + std::to_string(r.exit_code) + "\n" + r.out + "\n");
}

inline std::vector<std::string> on(const std::string& machine, std::vector<std::string> args) {
  args.insert(args.end(), {"--machine", kTests + "/machines/" + machine + ".json"});
  return args;
}

inline std::string fixture(const std::string& name) { return kTests + "/fatbins/" + name; }

inline std::string all_runs() {
  std::string out;
  for (const char* m : kTextMachines)
    for (const char* f : kFixtures) out += record(on(m, {fixture(f)}));
  for (const char* m : kJsonMachines)
    for (const char* f : kFixtures) out += record(on(m, {"--json", fixture(f)}));
  std::vector<std::string> every = {"--json"};
  for (const char* f : kFixtures) every.push_back(fixture(f));
  out += record(on("rtx3090-rtx4090", every));
  every.erase(every.begin());
  out += record(on("b200x8", every));
  out += record(on("h200", {fixture("sm90a.fatbin"), "/nonexistent/libx.so"}));
  return out;
}

}  // namespace gpuenv::golden
