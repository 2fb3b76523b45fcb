// What each NVML failure means and what to do about it, as Problems with
// stable codes (documented in docs/nvml-errors.md).
#pragma once

#include <span>
#include <string>

#include "model/machine.h"
#include "sense/error_table.h"
#include "sense/nvml/nvml_api.h"

namespace gpuenv {

/// One NVML return code: its nvml.h name, gpuenv's stable Problem code,
/// what it means, and the fix.
using NvmlError = LibraryError;

/// Every return code gpuenv explains; others become code "nvml_error".
std::span<const NvmlError> nvml_errors();

/// The row for rc, or nullptr.
const NvmlError* find_nvml_error(nvml::Return rc);

/// A failed call: message "<call> failed: <meaning> (<NAME> = <rc>)".
/// library_text (nvmlErrorString's) stands in for the meaning of a code
/// without a row; it may be null.
Problem nvml_problem(const std::string& call, nvml::Return rc, const char* library_text);

/// dlopen of the library failed; dlerror_text is what dlerror() said.
Problem nvml_library_not_found(const std::string& library, const std::string& dlerror_text);

/// The library opened but lacks a required function (names: "a or b").
Problem nvml_symbol_missing(const std::string& library, const std::string& names);

/// Codes that only say "no such value here" (not supported, not found,
/// an NVLink beyond the GPU's count): the field stays unknown, quietly.
bool nvml_error_means_absent(nvml::Return rc);

/// Codes after which a GPU answers nothing more (lost, needs a reset).
bool nvml_error_is_fatal_for_gpu(nvml::Return rc);

}  // namespace gpuenv
