// gpuenv bench: a registry of measurement cases, in the manner of
// nvbandwidth. Each case has a key, a description, a filter (does it apply
// to this target? otherwise the reason it is skipped) and a run. The
// measuring itself happens in the CUDA plugin (plugin/, through Backend);
// everything here is plain C++ and is tested without a GPU.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sense/cuda/bench_plugin_abi.h"
#include "model/machine.h"
#include "model/measurement.h"

namespace gpuenv::bench {

/// A CUDA device as the plugin enumerates it (CUDA ordinal order).
struct Device {
  int ordinal = 0;
  std::string name, uuid;
  ComputeCapability cc;
  int multiprocessors = 0;
  std::uint64_t memory_total = 0;
  friend bool operator==(const Device&, const Device&) = default;
};

/// What runs the operations: the CUDA plugin, or a fake in tests.
class Backend {
 public:
  virtual ~Backend() = default;
  /// The CUDA devices; false with the reason in *err.
  virtual bool devices(std::vector<Device>* out, std::string* err) = 0;
  virtual gpuenv_bench_result run(const gpuenv_bench_params& params) = 0;
};

struct BenchOptions {
  std::vector<int> sizes = {4096, 8192};  // square GEMM sizes
  int warmup = 2;
  int trials = 10;
  double min_trial_s = 0.02;                // a trial repeats the operation to last this long
  int algos = 16;                           // cuBLASLt heuristics tried per GEMM
  std::uint64_t copy_bytes = 1ull << 30;    // device copies
  std::uint64_t host_bytes = 256ull << 20;  // host<->device, p2p
  std::uint64_t allreduce_bytes = 256ull << 20;
  double duration_s = 60;  // check --long: sustained GEMM and memtest, each
  double memtest_fraction = 0.9;
  std::vector<std::string> only;            // case keys or key prefixes; empty: all
  std::optional<std::vector<int>> devices;  // CUDA ordinals; nullopt: all
  std::uint64_t seed = 0x9e3779b97f4a7c15ull;
};

/// The devices one run of a case measures: one, an ordered pair, or all.
struct Target {
  std::vector<Device> devices;
};

/// Everything a filter or a run may look at.
struct BenchContext {
  const Machine* machine = nullptr;
  std::vector<Device> devices;  // selected CUDA devices
  BenchOptions options;
  /// The sensed GPU behind a CUDA device (matched by UUID; a MIG device
  /// maps to its parent, and *mig says so), or nullptr.
  const Gpu* gpu_of(const Device& d, bool* mig = nullptr) const;
};

enum class BenchStatus { kOk, kSkipped, kWrong, kError };

/// How the samples (seconds per operation) become the figure.
enum class FigureKind {
  kTflops,        // work = FLOPs
  kGBps,          // work = bytes read + written
  kMicros,        // seconds per operation, shown in microseconds
  kAllReduceBus,  // work = bytes reduced; busbw = algbw * 2(n-1)/n
  kErrors,        // pass/fail test: the figure is the count of mismatches
};

enum class CaseScope { kDevice, kPair, kAll };

struct Result {
  std::string key, description;
  CaseScope scope = CaseScope::kDevice;
  Target target;
  BenchStatus status = BenchStatus::kOk;
  std::string message;  // why skipped or failed
  std::string detail;   // method, verification
  FigureKind metric = FigureKind::kGBps;
  std::vector<double> samples;
  double work = 0;
  double error = -1;
  std::uint64_t mismatches = 0;
  std::optional<double> value;  // in unit(); set by finish()
  std::optional<double> peak;
  double wall_s = 0;
  std::string unit() const;
  bool failed() const { return status == BenchStatus::kWrong || status == BenchStatus::kError; }
};

/// "0", "0->1" or "all": which devices a result measured.
std::string target_label(const Result& r);

/// "781.4 TFLOP/s", "4312 GB/s", "2.31 us".
std::string format_value(double v, const std::string& unit);

/// Computes value (median of samples as the metric says) from samples and work.
void finish(Result* r);

using FilterFn = std::function<std::optional<std::string>(const BenchContext&, const Target&)>;
using RunFn = std::function<Result(Backend&, const BenchContext&, const Target&)>;

struct Case {
  std::string key;
  std::string description;
  CaseScope scope = CaseScope::kDevice;
  FilterFn filter;  // nullopt: applies; else why it is skipped
  RunFn run;
};

/// The default cases of `gpuenv bench` for these options.
std::vector<Case> bench_cases(const BenchOptions& o);
/// `gpuenv check`: a small verified GEMM and copy; with `long_check` also a
/// sustained GEMM and a memory pattern test.
std::vector<Case> check_cases(const BenchOptions& o, bool long_check);

/// One case on one target, or a case skipped with the reason.
struct Planned {
  Case c;
  Target target;
  std::optional<std::string> skip;
};

/// Expands cases over the context's devices (per device, per ordered pair,
/// or once over all) and applies the filters and BenchOptions::only.
std::vector<Planned> plan_cases(const std::vector<Case>& cases, const BenchContext& ctx);

/// Called before each planned case runs: (index, count, planned).
using Progress = std::function<void(size_t, size_t, const Planned&)>;

/// Runs what plan_cases planned, in order; skipped ones become results too.
std::vector<Result> run_cases(Backend& backend, const BenchContext& ctx, const std::vector<Planned>& plan,
                              const Progress& progress);

/// Stored form of a result (skipped results are not stored).
std::optional<Measurement> to_measurement(const Result& r, const std::string& measured_at);

/// Parses "4096,8192" into sizes; false with a message on a bad list.
bool parse_sizes(const std::string& text, std::vector<int>* out, std::string* err);

}  // namespace gpuenv::bench
