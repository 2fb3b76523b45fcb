// dcgm-exporter's counters CSV (its -f/--collectors FILE, the format of its
// etc/default-counters.csv), which `gpuenv export -f` reads to choose the
// DCGM_FI_* series it serves (docs/metrics.md, "Counters CSV"). Pure: the
// file is read by act/export_files.h's load_dcgm_counters.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/dcgm_counter.h"

namespace gpuenv {

/// Parses the file's text: a line starting with '#' is a comment, an empty
/// line is skipped, and every other line is `FIELD, TYPE, HELP` (fields may
/// be double-quoted, with "" for a quote; spaces around them are trimmed),
/// TYPE one of gauge, counter, histogram, summary, label. False with *err
/// ("line 7: 2 fields, want 3: FIELD, TYPE, HELP") on the first bad line;
/// whether gpuenv can serve a field is not judged here
/// (act/render/gpu_metrics.h dcgm_unservable).
bool parse_dcgm_counters(std::string_view text, std::vector<DcgmCounter>* out, std::string* err);

}  // namespace gpuenv
