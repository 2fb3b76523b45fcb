// gpuenv_gpm_probe: prints what `gpuenv export`'s sampler reads, one JSON
// line per round (sample_nvml, sense/nvml/nvml_sampler.h): each device's
// utilisation and NVML GPM ratios. For tests/gpu/gpm.sh, which compares
// them with pynvml's own GPM reading; and for ctest against the stand-in NVML.
//   gpuenv_gpm_probe [LIBRARY] [INTERVAL_MS] [ROUNDS]
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "model/json_opt.h"
#include "sense/nvml/nvml_errors.h"
#include "sense/nvml/nvml_sampler.h"

using namespace gpuenv;

int main(int argc, char** argv) {
  std::string library = argc > 1 ? argv[1] : "libnvidia-ml.so.1";
  int interval_ms = argc > 2 ? std::atoi(argv[2]) : 1000, rounds = argc > 3 ? std::atoi(argv[3]) : 5;
  if (interval_ms < 1 || rounds < 1) {
    std::fprintf(stderr, "usage: gpuenv_gpm_probe [LIBRARY] [INTERVAL_MS >= 1] [ROUNDS >= 1]\n");
    return 2;
  }
  Nvml nvml;
  Problem err;
  if (!load_nvml(library, &nvml, &err)) return std::fprintf(stderr, "%s\n", err.message.c_str()), 1;
  if (nvml::Return rc = nvml.fn.init.call(); rc != nvml::kSuccess) {
    std::fprintf(stderr, "%s\n", nvml_problem(nvml.fn.init.name, rc, nvml_error_text(nvml, rc)).message.c_str());
    return 1;
  }
  SamplerMemory memory;
  for (int i = 0; i < rounds; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
    Readings r = sample_nvml(nvml, &memory, steady_seconds());
    nlohmann::json devices = nlohmann::json::array();
    for (const DeviceReading& d : r.devices)
      devices.push_back({{"gpu", d.gpu},
                         {"mig", opt(d.mig)},
                         {"up", d.up},
                         {"utilization", opt(d.utilization_ratio)},
                         {"gr_engine_active", opt(d.gpm_gr_engine_active)},
                         {"sm_active", opt(d.gpm_sm_active)},
                         {"sm_occupancy", opt(d.gpm_sm_occupancy)},
                         {"tensor_active", opt(d.gpm_tensor_active)},
                         {"fp32_active", opt(d.gpm_fp32_active)},
                         {"fp16_active", opt(d.gpm_fp16_active)},
                         {"dram_active", opt(d.gpm_dram_active)}});
    nlohmann::json line = {{"t", r.sampled_at}, {"nvml_errors_total", r.nvml_errors_total}, {"devices", devices}};
    std::printf("%s\n", line.dump().c_str());
    std::fflush(stdout);
  }
  memory.gpm.clear();
  nvml.fn.shutdown.call();
  return 0;
}
