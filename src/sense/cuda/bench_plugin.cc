#include "sense/cuda/bench_plugin.h"

#include "sys/fs.h"

namespace gpuenv {
namespace {

bool try_load(const std::string& path, BenchPlugin* out, std::string* why) {
  auto lib = std::make_unique<DynamicLibrary>();
  if (!lib->open(path, why)) return false;
  Fn<gpuenv_bench_plugin_fn> entry;
  const Symbol table[] = {{{GPUENV_BENCH_PLUGIN_SYMBOL}, &entry, true}};
  std::string missing;
  if (!lib->resolve(table, &missing)) {
    *why = path + ": no " + missing + " (not a gpuenv plugin)";
    return false;
  }
  const gpuenv_bench_api* api = entry.call();
  if (api == nullptr || api->abi_version != GPUENV_BENCH_ABI_VERSION) {
    *why = path + ": plugin interface version " + std::to_string(api ? api->abi_version : 0) + ", this gpuenv needs " +
           std::to_string(GPUENV_BENCH_ABI_VERSION) + " (a plugin from another gpuenv build)";
    return false;
  }
  out->library = std::move(lib);
  out->api = api;
  out->path = path;
  return true;
}

}  // namespace

bool load_bench_plugin(const std::string& env_value, BenchPlugin* out, std::string* err) {
  std::string reasons;
  for (const auto& path : fs::own_file_candidates(kBenchPluginName, env_value, fs::executable_path())) {
    std::string why;
    if (try_load(path, out, &why)) return true;
    reasons += (reasons.empty() ? "" : "; ") + why;
  }
  *err = "cannot load the CUDA plugin " + std::string(kBenchPluginName) + " (" + reasons +
         "); build gpuenv where the CUDA toolkit is installed (it is built beside the gpuenv binary) "
         "or point GPUENV_BENCH_PLUGIN at it";
  return false;
}

}  // namespace gpuenv
