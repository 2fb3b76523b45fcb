// The official PyTorch wheel variants (cu118 ... cu130): the GPU code each
// carries and the driver each needs, over all releases (the caches rule
// judges an installed torch by them), and the builds of one release that
// doctor recommends. Sources: docs/rules/caches.md (wheel architectures),
// docs/wheels.md (the release matrix, the CUDA toolkit driver table).
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
  const char* full;  // nullptr where gpuenv has no source for it (docs/wheels.md)
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

/// One official Linux x86_64 build of one torch release: PyTorch's "CUDA
/// Support Matrix" (RELEASE.md) for 2.9 to 2.12, each row's source cited in
/// docs/wheels.md. What doctor's fixes install.
struct TorchBuild {
  const char* torch;    // "2.12.1": the newest patch release gpuenv knows of
  const char* variant;  // "cu126"
  const char* cuda;     // "12.6.3": the toolkit it bundles
  std::vector<ComputeCapability> sass;
  std::optional<ComputeCapability> ptx;
  // The least Linux driver that runs it: CUDA 12.x builds run on any
  // 12.x driver from 525.60.13 on through minor-version compatibility
  // (PTX JIT aside), 13.x from 580.65.06 (the CUDA Compatibility guide).
  const char* min_driver;
};

/// Every release's builds: oldest release first, each release's oldest
/// CUDA first.
const std::vector<TorchBuild>& release_matrix();

/// "2.12.0+cu130" -> "2.12"; "" when it does not start with N.N.
std::string release_of(const std::string& torch_version);

/// The builds of one release ("2.12"); empty when the matrix lacks it.
std::vector<const TorchBuild*> builds_of(const std::string& release);

/// The newest release's builds: what a fix installs when the user's own
/// release is unknown or has nothing for the machine.
std::vector<const TorchBuild*> recommended_builds();

/// The builds of the image's default release (2.9, docker/Dockerfile): the
/// README's "Which base tag" table (WheelsTest.ReadmeTableIsTheImageBuilds).
std::vector<const TorchBuild*> image_builds();

/// Whether the driver runs `b`: by its version when known, else by the
/// CUDA version it reports; true when neither was sensed.
bool driver_runs(const Nvidia& n, const TorchBuild& b);

/// Whether `b` has SASS for every capability in `gpus` (natively, no PTX JIT).
bool carries_all(const TorchBuild& b, const std::vector<ComputeCapability>& gpus);

/// The newest-CUDA build that carries every GPU in `gpus` and that the
/// driver runs (`driver`; nullptr: any driver): among release `release`'s
/// builds (the user's own, "2.12") when it has one, else among the newest
/// release's; nullptr when neither has one.
const TorchBuild* newest_build(const std::vector<ComputeCapability>& gpus, const Nvidia* driver,
                               const std::string& release = "");

/// Among the builds (of `release` first, as newest_build) that carry every
/// GPU in `gpus`, the newest of those that need the least driver: what to
/// install after the smallest driver upgrade. nullptr when none carries
/// code for them.
const TorchBuild* least_driver_build(const std::vector<ComputeCapability>& gpus,
                                     const std::string& release = "");

/// "pip install --force-reinstall torch==2.12.1 --index-url
/// https://download.pytorch.org/whl/cu126": replaces whatever torch is
/// installed. `version` ("2.12.0") pins the user's own patch release instead
/// of b.torch; every patch of a release ships the same builds.
std::string pip_install(const TorchBuild& b, const std::string& version = "");

}  // namespace gpuenv
