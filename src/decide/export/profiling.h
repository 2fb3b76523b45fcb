// Where the DCGM_FI_PROF_* fields (dcgm-exporter's profiling ratios) come
// from on each GPU, and which GPUs cannot have them and why: NVML GPM
// samples Hopper and newer, DCGM (libdcgm.so.4) the GPUs before it. One
// judgement for `gpuenv export`'s start-up line (from its first round) and
// doctor's check "profiling" (from the Machine). Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/gpu_reading.h"
#include "model/machine.h"

namespace gpuenv {

struct ProfilingSources {
  std::vector<std::string> without_gpm;  // the names of the GPUs GPM cannot sample
  bool dcgm = false;                     // DCGM serves them (export) or loads (doctor)
  std::optional<std::string> dcgm_problem;  // why DCGM, though installed, does not serve them
};

/// The GPUs GPM cannot sample: compute capability below 9.0 (MIG devices
/// are not counted), and whether libdcgm loaded (Nvidia::dcgm_library).
ProfilingSources profiling_sources(const Machine& m);
/// The same from the exporter's round: GPUs NVML said GPM cannot sample.
ProfilingSources profiling_sources(const Readings& r);

/// "DCGM_FI_PROF_*: NVML GPM needs Hopper or newer; install DCGM
/// (libdcgm.so.4) to serve them on this A100", or with DCGM's failure;
/// nullopt when every GPU has a source.
std::optional<std::string> profiling_gap(const ProfilingSources& s);

/// "A100" for "NVIDIA A100-SXM4-80GB", "T4" for "Tesla T4": the model as a
/// sentence names it.
std::string gpu_model(const std::string& name);

/// "this A100", "this A100 and T4": the models of `names`, each once.
std::string these_gpus(const std::vector<std::string>& names);

}  // namespace gpuenv
