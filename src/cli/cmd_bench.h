// gpuenv bench and gpuenv check (cli/cmd_bench.cc, cli/cmd_check.cc), and
// what the two share: the CUDA plugin, device selection, the store.
#pragma once

#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench.h"
#include "bench/plugin_backend.h"
#include "cli/context.h"
#include "sense/cuda/bench_plugin.h"
#include "store/store.h"

namespace gpuenv {

/// The loaded plugin, its backend and the CUDA devices it sees.
struct BenchSession {
  BenchPlugin plugin;
  std::unique_ptr<bench::PluginBackend> backend;
  std::vector<bench::Device> devices;
  /// Loads the plugin ($GPUENV_BENCH_PLUGIN or beside gpuenv) and lists the
  /// devices, keeping those in `only` (CUDA ordinals) when given.
  bool open(const std::optional<std::vector<int>>& only, std::string* err);
};

/// Stores the results that ran (not the skipped) as one run; the run id, or
/// nullopt with a warning printed.
std::optional<std::int64_t> store_results(const std::string& path, const store::Run& run,
                                          const std::vector<bench::Result>& results);

/// Shows progress on stderr when it is a terminal.
bench::Progress terminal_progress(bool quiet);
/// Clears the progress line.
void end_progress(bool quiet);

}  // namespace gpuenv
