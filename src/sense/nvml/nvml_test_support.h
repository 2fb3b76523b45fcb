// Test support for the NVIDIA sensing tests: runs the real dlopen path
// against the stand-in libraries built by tests/CMakeLists.txt (fake NVML,
// old fake NVML, fake CUDA) with a scenario file, and reads their traces.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "model/machine.h"
#include "model/snapshot.h"
#include "sense/sense.h"
#include "test_paths.h"

namespace gpuenv::testing {

inline const std::string kFakeNvml = (test_paths::fake_dir() + "/libnvidia-ml.so.1");
inline const std::string kOldNvml = (test_paths::fake_dir() + "/old/libnvidia-ml.so.1");
inline const std::string kFakeCuda = (test_paths::fake_dir() + "/libcuda.so.1");
inline const std::string kNoNvml = "/nonexistent/libnvidia-ml.so.1";
inline const std::string kNoCuda = "/nonexistent/libcuda.so.1";
/// SenseOptions::root of a FakeRun unless told otherwise: no sysfs, so each
/// GPU's CPUs and NUMA node come from NVML (the scenario), whatever PCI
/// devices the machine running the tests has.
inline const std::string kNoRoot = "/nonexistent/gpuenv-root";

/// tests/fake_nvml/scenarios/<name>.txt
inline std::string scenario(const std::string& name) {
  return (test_paths::tests_dir() + "/fake_nvml/scenarios/") + name + ".txt";
}

/// One sense_nvidia run: which libraries, which scenarios. By default the
/// fake NVML with no scenario, and no CUDA library.
class FakeRun {
 public:
  FakeRun& nvml(const std::string& library) { return set(&nvml_, library); }
  FakeRun& scenario(const std::string& path) { return set(&nvml_scenario_, path); }
  FakeRun& cuda(const std::string& library) { return set(&cuda_, library); }
  FakeRun& cuda_scenario(const std::string& path) { return set(&cuda_scenario_, path); }
  /// The fake CUDA driver answering from the scenario at path.
  FakeRun& fake_cuda(const std::string& path) { return cuda(kFakeCuda).cuda_scenario(path); }
  FakeRun& with_cuda() {
    with_cuda_ = true;
    return *this;
  }
  FakeRun& with_health() {
    with_health_ = true;
    return *this;
  }
  FakeRun& without_details() {
    with_details_ = false;
    return *this;
  }
  /// A fake tree with sys/bus/pci/devices/<address>/... in it.
  FakeRun& root(const std::string& path) { return set(&root_, path); }

  std::string nvml_ = kFakeNvml;
  std::string nvml_scenario_;  // a path; empty: FAKE_NVML_SCENARIO unset
  std::string cuda_ = kNoCuda;
  std::string cuda_scenario_;  // a path; empty: FAKE_CUDA_SCENARIO unset
  bool with_cuda_ = false;
  bool with_health_ = false;
  bool with_details_ = true;
  std::string root_ = kNoRoot;

 private:
  FakeRun& set(std::string* field, const std::string& value) {
    *field = value;
    return *this;
  }
};

inline void set_env(const char* name, const std::string& value) {
  if (value.empty())
    unsetenv(name);
  else
    setenv(name, value.c_str(), 1);
}

inline std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

/// Gives each test its own trace files (FAKE_NVML_TRACE, FAKE_CUDA_TRACE)
/// and scenario directory, and clears the variables afterwards.
class FakeNvidiaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    prefix_ = ::testing::TempDir() + "gpuenv_" + info->test_suite_name() + "_" + info->name();
    std::remove(nvml_trace_path().c_str());
    std::remove(cuda_trace_path().c_str());
    set_env("FAKE_NVML_TRACE", nvml_trace_path());
    set_env("FAKE_CUDA_TRACE", cuda_trace_path());
  }
  void TearDown() override {
    for (const char* v :
         {"FAKE_NVML_TRACE", "FAKE_CUDA_TRACE", "FAKE_NVML_SCENARIO", "FAKE_CUDA_SCENARIO"})
      unsetenv(v);
  }

  Machine sense(const FakeRun& run) {
    set_env("FAKE_NVML_SCENARIO", run.nvml_scenario_);
    set_env("FAKE_CUDA_SCENARIO", run.cuda_scenario_);
    SenseOptions opts;
    opts.nvml_library = run.nvml_;
    opts.cuda_library = run.cuda_;
    opts.with_cuda = run.with_cuda_;
    opts.with_health = run.with_health_;
    opts.with_details = run.with_details_;
    opts.root = run.root_;
    Machine m;
    sense_nvidia(opts, &m);
    return m;
  }

  /// Writes a scenario for this test only; returns its path.
  std::string write_scenario(const std::string& text, const std::string& tag = "") {
    std::string path = prefix_ + tag + "_scenario.txt";
    std::ofstream(path) << text;
    return path;
  }

  /// A named scenario's text, to write a variation of it.
  static std::string scenario_text(const std::string& name) {
    std::ifstream in(scenario(name));
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::string nvml_trace_path() const { return prefix_ + "_nvml_trace"; }
  std::string cuda_trace_path() const { return prefix_ + "_cuda_trace"; }
  std::vector<std::string> nvml_trace() const { return read_lines(nvml_trace_path()); }
  std::vector<std::string> cuda_trace() const { return read_lines(cuda_trace_path()); }
  bool cuda_was_loaded() const { return std::ifstream(cuda_trace_path()).good(); }

 private:
  std::string prefix_;
};

/// The CPUs lo..hi of each range, in order.
inline std::vector<int> cpu_ranges(std::initializer_list<std::pair<int, int>> ranges) {
  std::vector<int> cpus;
  for (auto [lo, hi] : ranges)
    for (int c = lo; c <= hi; ++c) cpus.push_back(c);
  return cpus;
}

/// Readable JSON of a GPU list, for failure messages.
inline std::string gpus_json(const std::vector<Gpu>& gpus) {
  Machine m;
  m.gpus = gpus;
  return machine_to_json(m);
}

#define EXPECT_GPUS_EQ(actual, expected)                                                         \
  EXPECT_TRUE((actual) == (expected)) << "actual:\n"                                             \
                                      << ::gpuenv::testing::gpus_json(actual) << "\nexpected:\n" \
                                      << ::gpuenv::testing::gpus_json(expected)

}  // namespace gpuenv::testing
