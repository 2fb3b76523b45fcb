#include "bench/plugin_backend.h"

#include <cstring>

namespace gpuenv::bench {

bool PluginBackend::devices(std::vector<Device>* out, std::string* err) {
  std::vector<gpuenv_bench_device> raw(GPUENV_BENCH_MAX_DEVICES);
  char text[512] = {0};
  int n = api_->devices(raw.data(), static_cast<int>(raw.size()), text, sizeof text);
  if (n < 0) {
    *err = std::string(text, strnlen(text, sizeof text));
    return false;
  }
  out->clear();
  for (int i = 0; i < n && i < static_cast<int>(raw.size()); ++i) {
    const auto& d = raw[i];
    out->push_back({i,
                    std::string(d.name, strnlen(d.name, sizeof d.name)),
                    std::string(d.uuid, strnlen(d.uuid, sizeof d.uuid)),
                    {d.cc_major, d.cc_minor},
                    d.multiprocessors,
                    d.memory_total});
  }
  return true;
}

gpuenv_bench_result PluginBackend::run(const gpuenv_bench_params& params) {
  gpuenv_bench_result r;
  std::memset(&r, 0, sizeof r);
  r.error = -1;
  api_->run(&params, &r);
  return r;
}

}  // namespace gpuenv::bench
