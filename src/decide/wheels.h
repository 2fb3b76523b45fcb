// The official PyTorch wheel variants (cu118 ... cu130): the GPU code each
// carries and the driver each needs. Shared by the caches rule and doctor.
// Sources: docs/rules/caches.md (wheel architectures), docs/doctor.md
// (CUDA toolkit driver table).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/machine.h"

namespace gpuenv {

/// What the official Linux wheels of one CUDA variant carry, over the torch
/// releases built for it (.ci/manywheel/build_cuda.sh at each tag).
struct WheelArchs {
  const char* variant;                       // "cu128"
  int cuda = 0;                              // 12080: the CUDA it bundles
  std::vector<ComputeCapability> sass;       // in every release
  std::vector<ComputeCapability> some_sass;  // in some releases only
  std::optional<ComputeCapability> ptx;      // in at least one release
};

/// Oldest variant first.
const std::vector<WheelArchs>& wheel_table();
const WheelArchs* wheel_for(const std::string& variant);

/// "13.0" -> "cu130"; "12.8.1" -> "cu128".
std::string variant_of(const std::string& cuda_version);

/// "13.0" -> 13000, the encoding cuDriverGetVersion and NVML use; nullopt
/// when unparsable.
std::optional<int> cuda_number(const std::string& cuda_version);

/// 12080 -> "12.8".
std::string cuda_string(int cuda);

/// The Linux driver a CUDA toolkit release needs: `full` supports all of
/// it (the driver its GA shipped with), `minor_compat` is the least driver
/// of its major family that runs it through minor-version compatibility.
struct ToolkitDriver {
  int cuda = 0;  // 12080
  const char* full;
  const char* minor_compat;
};

/// The row for `cuda` (12080), or for the newest release of that major not
/// newer than it; nullptr when gpuenv knows no such release.
const ToolkitDriver* toolkit_driver(int cuda);

/// -1, 0, 1 comparing driver versions "580.65.06" and "570.124"; unparsable
/// parts compare as 0.
int compare_driver_versions(const std::string& a, const std::string& b);

/// Whether a cubin for one of `sass` runs on a GPU of capability `gpu`.
bool any_cubin_runs(const std::vector<ComputeCapability>& sass, ComputeCapability gpu);

/// Whether a wheel's code runs on a GPU of capability `gpu` natively (some
/// cubin in every release fits).
bool wheel_runs_natively(const WheelArchs& w, ComputeCapability gpu);

/// The newest variant whose CUDA the driver supports (`driver_cuda`, e.g.
/// 12080; nullopt: any) and that carries SASS for every capability in
/// `gpus`; nullptr when none does.
const WheelArchs* best_wheel(const std::vector<ComputeCapability>& gpus,
                             std::optional<int> driver_cuda);

/// "pip install torch --index-url https://download.pytorch.org/whl/cu128"
std::string pip_install(const WheelArchs& w);

}  // namespace gpuenv
