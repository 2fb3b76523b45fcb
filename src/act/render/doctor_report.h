// `gpuenv doctor`'s output: a line per finding with its fix, or JSON; and
// `doctor --list`, the checks. Both are reports (act/render/report.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "act/render/machine_report.h"
#include "diagnose/doctor.h"

namespace gpuenv {

/// The findings of a doctor run.
struct DoctorReport {
  const std::vector<Finding>& findings;
};

/// {"status": "error", "counts": {...}, "findings": [{check, status, seen, fix}]}
nlohmann::json report_json(const DoctorReport& r);
/// Errors first, then warnings, then ok; a summary line at the top.
std::string report_text(const DoctorReport& r, const Style& style);

/// `doctor --list`: the checks doctor runs.
struct CheckListReport {
  const std::vector<Check>& checks;
};

/// [{"name", "summary"}, ...]
nlohmann::ordered_json report_json(const CheckListReport& r);
/// "NAME<TAB>SUMMARY" a line.
std::string report_text(const CheckListReport& r, const Style& style);

}  // namespace gpuenv
