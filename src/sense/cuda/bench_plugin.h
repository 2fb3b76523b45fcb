// Finding and loading gpuenv's CUDA plugin, libgpuenv-bench.so, for
// `gpuenv bench` and `gpuenv check`. The gpuenv binary links no CUDA
// library; only these commands load one, through the plugin.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sense/cuda/bench_plugin_abi.h"
#include "sys/dynamic_library.h"

namespace gpuenv {

inline constexpr const char* kBenchPluginName = "libgpuenv-bench.so";

/// An open plugin; unloaded when destroyed.
struct BenchPlugin {
  std::unique_ptr<DynamicLibrary> library;
  const gpuenv_bench_api* api = nullptr;
  std::string path;
};

/// Loads the first of fs::own_file_candidates (`env_value`: $GPUENV_BENCH_PLUGIN)
/// that opens and speaks this ABI version. On failure returns false with
/// every candidate's reason and the fix in *err.
bool load_bench_plugin(const std::string& env_value, BenchPlugin* out, std::string* err);

}  // namespace gpuenv
