// The shape NVML's and the CUDA driver's error tables share: each return
// code gpuenv explains, as a row, and one lookup that turns a failed call
// into a Problem (codes documented in docs/nvml-errors.md).
#pragma once

#include <span>
#include <string>

#include "model/machine.h"

namespace gpuenv {

/// One return code of a driver library: its header's name, gpuenv's stable
/// Problem code, what it means, and the fix.
struct LibraryError {
  int rc;            // nvmlReturn_t or CUresult
  const char* name;  // "NVML_ERROR_DRIVER_NOT_LOADED"
  const char* code;  // "nvml_driver_not_loaded"
  const char* meaning;
  const char* fix;
};

/// What a library's table says of a code without a row.
struct UnlistedError {
  const char* source;   // Problem source: "nvml"
  const char* code;     // "nvml_error"
  const char* name;     // stands for the NAME: "NVML error"
  const char* meaning;  // when the library gave no text: "unrecognised NVML error"
  const char* fix;
};

/// The fix of a code only a gpuenv bug can cause.
inline constexpr const char* kReportGpuenvBug =
    "this is a gpuenv bug: please report it with the driver version (`nvidia-smi`)";

/// The row of `table` for rc, or nullptr.
const LibraryError* find_library_error(std::span<const LibraryError> table, int rc);

/// A failed call: message "<call> failed: <meaning> (<NAME> = <rc>)".
/// library_text (the library's own error string) stands in for the meaning
/// of a code without a row; it may be null.
Problem library_error_problem(std::span<const LibraryError> table, const UnlistedError& unlisted,
                              const std::string& call, int rc, const char* library_text);

}  // namespace gpuenv
