// The CUDA driver (libcuda.so.1, dlopened): GPUs as CUDA enumerates them.
// gpuenv asks it only when told to (--cuda: multiprocessor counts) or when
// NVML cannot answer (Jetson has no NVML; a broken NVML).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/machine.h"
#include "sense/cuda/cuda_api.h"
#include "sense/error_table.h"

namespace gpuenv {

/// One device as the CUDA driver reports it.
struct CudaDevice {
  int ordinal = 0;                        // CUDA's order (FASTEST_FIRST unless told otherwise)
  std::optional<std::string> name, uuid;  // uuid as "GPU-xxxxxxxx-xxxx-..."
  std::optional<ComputeCapability> compute_capability;
  std::optional<std::uint64_t> memory_total_bytes;
  std::optional<int> multiprocessor_count;
  std::optional<int> pci_domain, pci_bus, pci_device;
  friend bool operator==(const CudaDevice&, const CudaDevice&) = default;
};

/// What sensing through the CUDA driver found.
struct CudaReport {
  std::optional<std::string> library;  // the library that loaded (path or soname)
  std::optional<int> init_result;      // cuInit's CUresult, failed or not; nullopt: not called
  std::optional<int> driver_version;   // cuDriverGetVersion: 12060 for 12.6
  std::vector<CudaDevice> devices;
  std::vector<Problem> problems;  // source "cuda"
};

/// Loads `library`, calls cuDriverGetVersion, cuInit(0) and enumerates.
CudaReport sense_cuda(const std::string& library);

/// One CUresult: its cuda.h name, gpuenv's stable code, meaning and fix.
using CudaError = LibraryError;

/// Every CUresult gpuenv explains; others become code "cuda_error".
std::span<const CudaError> cuda_errors();

/// A failed call: message "<call> failed: <meaning> (<NAME> = <rc>)".
Problem cuda_problem(const std::string& call, cuda::Result rc, const char* library_text);

/// A CUuuid spelled as NVML spells GPU UUIDs: "GPU-" and 8-4-4-4-12 hex.
std::string format_cuda_uuid(const cuda::Uuid& uuid);

}  // namespace gpuenv
