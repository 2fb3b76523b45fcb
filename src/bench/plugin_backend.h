// The Backend that runs cases in the CUDA plugin.
#pragma once

#include "bench/bench.h"

namespace gpuenv::bench {

class PluginBackend : public Backend {
 public:
  explicit PluginBackend(const gpuenv_bench_api* api) : api_(api) {}
  bool devices(std::vector<Device>* out, std::string* err) override;
  gpuenv_bench_result run(const gpuenv_bench_params& params) override;

 private:
  const gpuenv_bench_api* api_;
};

}  // namespace gpuenv::bench
