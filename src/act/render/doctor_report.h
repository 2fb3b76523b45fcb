// `gpuenv doctor`'s output: a line per finding with its fix, or JSON.
#pragma once

#include <string>
#include <vector>

#include "act/render/machine_report.h"
#include "diagnose/doctor.h"

namespace gpuenv {

/// Errors first, then warnings, then ok; a summary line at the top.
std::string render_doctor(const std::vector<Finding>& findings, const Style& style);

/// {"status": "error", "counts": {...}, "findings": [{check, status, seen, fix}]}
std::string doctor_to_json(const std::vector<Finding>& findings);

}  // namespace gpuenv
