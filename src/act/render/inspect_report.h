// `gpuenv inspect`'s output: per file its targets and one verdict line per
// GPU model, or JSON. docs/inspect.md has both layouts.
#pragma once

#include <string>
#include <vector>

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

/// Each readable file's line, target rows and verdicts (files with an
/// error are left to stderr); a line of its own when `m` has no GPU.
std::string render_inspect(const std::vector<InspectedFile>& files, const Machine& m);

/// {"files": [...], "exit_code": N}.
std::string inspect_to_json(const std::vector<InspectedFile>& files, int exit_code);

}  // namespace gpuenv
