// `gpuenv inspect`'s output: per file its targets and one verdict line per
// GPU model, or JSON. docs/inspect.md has both layouts.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "act/render/machine_report.h"
#include "decide/kernel_verdict.h"
#include "model/fatbin.h"
#include "model/machine.h"

namespace gpuenv {

/// One file as inspect saw it: read (sense/fatbin/fatbin_file.h), then judged.
struct InspectedFile {
  std::string path;
  std::string error;  // non-empty: unreadable, not ELF, or corrupt
  FatbinFile fatbin;
  BinaryVerdict verdict;
};

/// inspect's exit status: 3 (a file unreadable) takes precedence over 1
/// (a GPU cannot run the code), and 1 over 4 (PTX JIT); 0 otherwise
/// (docs/inspect.md).
int inspect_exit_code(const std::vector<InspectedFile>& files);

/// Each readable file's line, target rows and verdicts (files with an
/// error are left to stderr); a line of its own when `m` has no GPU.
std::string render_inspect(const std::vector<InspectedFile>& files, const Machine& m);

/// {"files": [...], "exit_code": N}.
nlohmann::json inspect_json(const std::vector<InspectedFile>& files, int exit_code);

/// `gpuenv inspect`: the files judged against the machine's GPUs. Its JSON
/// carries inspect_exit_code(files).
struct InspectReport {
  const std::vector<InspectedFile>& files;
  const Machine& machine;
};
nlohmann::json report_json(const InspectReport& r);
std::string report_text(const InspectReport& r, const Style& style);

}  // namespace gpuenv
