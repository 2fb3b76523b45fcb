// What each NVIDIA compute capability is: family, products, tensor-core
// formats, the arch-specific targets nvcc accepts, and the CUDA toolkits that
// can compile for it. One table, read by every rule and check that needs a
// hardware fact; docs/architectures.md renders it with sources.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/machine.h"

namespace gpuenv {

/// A CUDA toolkit release, e.g. {12, 8}.
struct CudaRelease {
  int major = 0;
  int minor = 0;
  friend bool operator==(const CudaRelease&, const CudaRelease&) = default;
  friend auto operator<=>(const CudaRelease&, const CudaRelease&) = default;
};

/// Formats the tensor cores multiply natively (dense matmul inputs).
struct TensorFormats {
  bool fp16 = false, bf16 = false, tf32 = false, fp8 = false, fp4 = false;
  friend bool operator==(const TensorFormats&, const TensorFormats&) = default;
};

struct ArchInfo {
  ComputeCapability cc;
  std::string family;    // "Ampere", "Ada Lovelace", ...
  TensorFormats tensor;  // all false before Volta (7.0): no tensor cores
  // Arch-specific (a) and family-specific (f) targets nvcc accepts besides
  // sm_XY, e.g. {"sm_100a", "sm_100f"}.
  std::vector<std::string> variants;
  std::optional<CudaRelease> first_cuda;  // first toolkit that compiles for it
  std::optional<CudaRelease> last_cuda;   // last one; nullopt: still supported
  bool tegra = false;                     // integrated GPU of a Jetson/DRIVE SoC
  std::string products;                   // examples, "A100, A30"
};

/// Every compute capability from 5.0 to 12.1 that exists, ascending.
const std::vector<ArchInfo>& arch_table();

/// The row for `cc`, or nullptr when gpuenv does not know it.
const ArchInfo* arch_info(ComputeCapability cc);

/// The tensor-core formats of `cc`: its row's; none for a capability older
/// than the table (tensor cores start with Volta); nullopt for one gpuenv
/// does not know (newer than the table, or a gap in it).
std::optional<TensorFormats> tensor_formats(ComputeCapability cc);

/// "Ampere", or "unknown (cc 13.0)" for a capability not in the table.
std::string family_name(ComputeCapability cc);

}  // namespace gpuenv
