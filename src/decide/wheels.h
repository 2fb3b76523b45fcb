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
  const char* full;  // the driver its GA shipped with (docs/wheels.md)
  const char* minor_compat;
};

/// The row for `cuda` (12080), or for the newest release of that major not
/// newer than it; nullptr when gpuenv knows no such release.
const ToolkitDriver* toolkit_driver(int cuda);

/// -1, 0, 1 comparing driver versions "580.65.06" and "570.124" field by
/// field as numbers, branch first (580.65.06 < 580.159.04, never as text);
/// unparsable parts compare as 0.
int compare_driver_versions(const std::string& a, const std::string& b);

/// Whether a cubin for one of `sass` runs on a GPU of capability `gpu`.
bool any_cubin_runs(const std::vector<ComputeCapability>& sass, ComputeCapability gpu);

/// One official Linux x86_64 build of one torch release: PyTorch's "CUDA
/// Support Matrix" (RELEASE.md) for 2.9 to 2.14, each row's source cited in
/// docs/wheels.md. What doctor's fixes install.
struct TorchBuild {
  const char* torch;    // "2.14.0": the newest patch release gpuenv knows of
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

/// Whether `b` has SASS for every capability in `gpus` (natively, no PTX JIT).
bool carries_all(const TorchBuild& b, const std::vector<ComputeCapability>& gpus);

/// The newest release in the matrix ("2.14") and the date of the newest
/// source it was checked against: what the label, doctor and docs/wheels.md
/// say so that a stale table shows itself.
struct WheelTableEnd {
  const char* release;  // "2.14"
  const char* date;     // "2026-09-18"
};
WheelTableEnd wheel_table_end();

/// "gpuenv's wheel table ends at torch 2.14 (sources up to 2026-09-18)".
std::string wheel_table_note();

/// The newest CUDA the driver supports in full (13000): the CUDA version it
/// reports when sensed, else the newest toolkit whose GA driver it is at
/// least; nullopt when neither is known.
std::optional<int> driver_cuda(const Nvidia& n);

/// Whether a driver that supports CUDA `have` (13000) runs CUDA `need`
/// (13020) by minor-version compatibility: the same major, and a driver of
/// that major's branch (assumed when its version was not sensed).
bool runs_by_minor_compat(const Nvidia& n, int have, int need);

/// What gpuenv advises for torch on one machine: the one decision behind
/// `labels`' torch.wheel and doctor's torch, driver_compat and kernels fixes.
struct WheelChoice {
  const TorchBuild* build = nullptr;  // the official build to install; nullptr: none
  std::string version;                // the version to pin: "2.14.0", or the user's own patch
  // The driver to install first when no build runs on this one: the GA
  // driver of `build`'s CUDA, so that afterwards the same choice is made.
  std::optional<std::string> driver_first;
  // `build`'s CUDA is newer than the driver's: it runs only through
  // minor-version compatibility (no build of the release fits under it).
  bool minor_compat = false;
  // The user's torch is newer than the table: `version` is theirs and the
  // variant is the newest known release's line, not verified for it.
  bool past_table = false;
  // The user's torch is a pre-release, local or vendor build (NGC's
  // "2.10.0a0+3e8e2a4.nv25.12"): no index serves it, so nothing is advised.
  bool not_reinstallable = false;
};

/// The choice for GPUs `gpus` on driver `n`, for the installed torch version
/// `installed` ("" for none or a node-wide answer). The driver's supported
/// CUDA is the ceiling: the newest-CUDA build at or under it wins; only when
/// none is under it, the build least beyond it that runs by minor-version
/// compatibility. A build of the user's own release first (pinned to their
/// patch), then of the newest release; never an older release than theirs.
WheelChoice choose_wheel(const std::vector<ComputeCapability>& gpus, const Nvidia& n,
                         const std::string& installed = "");

/// "pip install --force-reinstall torch==2.12.1 --index-url
/// https://download.pytorch.org/whl/cu126": replaces whatever torch is
/// installed. `version` ("2.12.0") pins the user's own patch release instead
/// of b.torch; every patch of a release ships the same builds.
std::string pip_install(const TorchBuild& b, const std::string& version = "");

}  // namespace gpuenv
