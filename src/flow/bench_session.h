// What `gpuenv bench` and `gpuenv check` (flow/bench.h, flow/check.h) are
// both handed and both do: the measuring engine's backend behind a
// BenchSession (the CUDA plugin, or a fake in a test), the devices chosen
// from it, the progress shown while the cases run, and the store the
// results go into.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "act/log.h"
#include "act/render/machine_report.h"
#include "bench/bench.h"
#include "bench/plugin_backend.h"
#include "sense/cuda/bench_plugin.h"
#include "sense/nvml/nvml_sampler.h"
#include "store/store.h"
#include "sys/text.h"

namespace gpuenv::flow {

/// Opens the backend the cases run on: PluginSession below, a fake in a test.
class BenchSession {
 public:
  virtual ~BenchSession() = default;
  /// The backend, which lives as long as the session; nullptr with the
  /// reason and the fix in *err.
  virtual bench::Backend* open(std::string* err) = 0;
};

/// gpuenv's CUDA plugin, libgpuenv-bench.so: $GPUENV_BENCH_PLUGIN, else
/// beside the executable (sense/cuda/bench_plugin.h).
class PluginSession : public BenchSession {
 public:
  bench::Backend* open(std::string* err) override;

 private:
  BenchPlugin plugin_;
  std::unique_ptr<bench::PluginBackend> backend_;
};

/// Opens the session and lists the backend's devices into *devices, keeping
/// those in `only` (CUDA ordinals) when given. nullptr with *err when it
/// cannot open, cannot list, or no device is left.
bench::Backend* open_devices(BenchSession& session, const std::optional<std::vector<int>>& only,
                             std::vector<bench::Device>* devices, std::string* err);

/// Where the progress goes while the cases run: TerminalProgress below.
class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  /// Case `index` of `count` starts.
  virtual void show(std::size_t index, std::size_t count, const bench::Planned& planned) = 0;
  /// The last case ended: clear what show() left.
  virtual void done() = 0;
};

/// The progress line on stderr, redrawn in place; only when stderr is a
/// terminal and the log is text (not in JSON logs).
class TerminalProgress : public ProgressSink {
 public:
  void show(std::size_t index, std::size_t count, const bench::Planned& planned) override;
  void done() override;
};

/// Runs what plan_cases planned on `backend`, telling `progress` (nullptr:
/// nobody) as each case starts and when they are done.
std::vector<bench::Result> run_planned(bench::Backend& backend, const bench::BenchContext& context,
                                       const std::vector<bench::Planned>& plan, ProgressSink* progress);

/// The measurement store: its path (--db, else gpuenv.db under the cache
/// root) and how long its calls wait for a lock another process holds.
struct StoreAt {
  std::string path;
  store::Patience patience;
};

/// What bench and check are both handed beside their own (BenchEnv,
/// CheckEnv): the real ones in a command, fakes in a test.
struct SessionEnv {
  BenchSession* session = nullptr;  // the backend the cases run on
  StoreAt store;
  std::function<std::string()> utc_clock = utc_now;  // a run's start, RFC 3339
  std::function<double()> clock = steady_seconds;    // seconds: how long the cases took
  ProgressSink* progress = nullptr;                  // nullptr: none shown
  std::function<void(const std::string&)> print = [](const std::string& s) { std::fputs(s.c_str(), stdout); };
  Style style;                    // stdout's: the report's colours
  MessageSink log = log_message;  // stderr: usage errors, the plugin, the store
};

/// Stores the results that ran (not the skipped) as one run; the run id, or
/// nullopt with a warning said to `log`.
std::optional<std::int64_t> store_results(const StoreAt& store, const store::Run& run,
                                          const std::vector<bench::Result>& results, const MessageSink& log);

}  // namespace gpuenv::flow
