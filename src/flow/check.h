// `gpuenv check`'s sequence (docs/bench.md, "gpuenv check"): judge the
// machine as sensed (problems, GPU health, the plan's warnings), then,
// unless it is a --machine snapshot, run the GPU tests on the measuring
// engine's backend (--long: watched through NVML), keep the figures in the
// store and show the verdicts. Handed what it reads and where it speaks
// (CheckEnv), so a test runs it whole with a fake backend and a fake watch;
// cli/cmd_check.cc only parses the flags into a CheckRequest.
#pragma once

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "act/log.h"
#include "act/render/machine_report.h"
#include "flow/bench_session.h"
#include "model/machine.h"
#include "model/plan.h"
#include "model/watched_gpu.h"
#include "sense/nvml/nvml_sampler.h"
#include "sense/nvml/nvml_watch.h"
#include "sys/text.h"

namespace gpuenv::flow {

/// What `gpuenv check` was asked: its flags, parsed.
struct CheckRequest {
  bool quick = false, long_check = false, json = false, no_store = false;
  double duration_s = 60;    // --long: seconds of each of the two long tests per GPU
  std::vector<int> devices;  // CUDA ordinals; empty: all visible
  std::string machine_file;  // --machine: the snapshot is judged, and no GPU test runs
};

/// Watches the GPUs while the long tests load them: NvmlGpuWatch below.
class GpuWatch {
 public:
  virtual ~GpuWatch() = default;
  /// Starts watching the GPUs with these UUIDs every `interval`; false with
  /// *err, and the check runs unwatched.
  virtual bool start(const std::vector<std::string>& uuids, std::chrono::milliseconds interval, Problem* err) = 0;
  /// Stops, and returns what was seen of each GPU.
  virtual std::vector<WatchedGpu> stop() = 0;
};

/// What the sequence is handed: the real ones in a command, fakes in a test.
struct CheckEnv : SessionEnv {
  /// The machine with GPU health and its stored measurements (or the
  /// --machine snapshot), and the options its plan is decided with; false
  /// when it cannot be read (the reason already said).
  std::function<bool(Machine*, Options*)> sense;
  GpuWatch* watch = nullptr;  // --long only
};

/// Runs `gpuenv check`. Exit status: kExitOk something was checked and
/// nothing failed; kExitFailure a verdict failed (the backend not opening
/// is one), or nothing was checked; kExitUsage --quick with --long, or a
/// --duration out of 1 to 86400 s; kExitBadInput the machine cannot be read.
int run_check(const CheckRequest& request, const CheckEnv& env);

/// NVML's watch: an NvmlWatch over the library at `nvml_library`.
class NvmlGpuWatch : public GpuWatch {
 public:
  explicit NvmlGpuWatch(std::string nvml_library) : library_(std::move(nvml_library)) {}
  bool start(const std::vector<std::string>& uuids, std::chrono::milliseconds interval, Problem* err) override {
    return watch_.start(library_, uuids, interval, err);
  }
  std::vector<WatchedGpu> stop() override { return watch_.stop(); }

 private:
  std::string library_;
  NvmlWatch watch_;
};

}  // namespace gpuenv::flow
