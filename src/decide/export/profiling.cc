#include "decide/export/profiling.h"

#include <algorithm>

namespace gpuenv {

ProfilingSources profiling_sources(const Machine& m) {
  ProfilingSources s;
  for (const Gpu& g : m.gpus)
    if (g.compute_capability && g.compute_capability->major < 9 && !g.problem)
      s.without_gpm.push_back(g.name.value_or("GPU " + std::to_string(g.index)));
  s.dcgm = m.nvidia.dcgm_library.has_value();
  return s;
}

ProfilingSources profiling_sources(const Readings& r) {
  ProfilingSources s;
  for (const DeviceReading& d : r.devices)
    if (d.gpm_unsupported) s.without_gpm.push_back(d.name.value_or("GPU " + std::to_string(d.gpu)));
  s.dcgm = r.dcgm_serving;
  s.dcgm_problem = r.dcgm_problem;
  return s;
}

std::string gpu_model(const std::string& name) {
  std::string out = name;
  for (const char* vendor : {"NVIDIA ", "Tesla "})
    if (out.rfind(vendor, 0) == 0) out.erase(0, std::string(vendor).size());
  return out.substr(0, out.find('-'));
}

std::string these_gpus(const std::vector<std::string>& names) {
  std::vector<std::string> models;
  for (const std::string& n : names)
    if (std::string m = gpu_model(n); std::find(models.begin(), models.end(), m) == models.end()) models.push_back(m);
  std::string out = "this ";
  for (std::size_t i = 0; i < models.size(); ++i)
    out += (i == 0 ? "" : i + 1 == models.size() ? " and " : ", ") + models[i];
  return out;
}

std::optional<std::string> profiling_gap(const ProfilingSources& s) {
  if (s.without_gpm.empty() || (s.dcgm && !s.dcgm_problem)) return std::nullopt;
  std::string gpus = these_gpus(s.without_gpm);
  if (s.dcgm_problem)
    return "DCGM_FI_PROF_*: NVML GPM needs Hopper or newer, and DCGM (libdcgm.so.4) cannot serve them on " + gpus +
           ": " + *s.dcgm_problem;
  return "DCGM_FI_PROF_*: NVML GPM needs Hopper or newer; install DCGM (libdcgm.so.4) to serve them on " + gpus;
}

}  // namespace gpuenv
