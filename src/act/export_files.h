// The exporter's two configuration files, read: `gpuenv export -f` (the
// counters CSV) and `--web-config-file` (TLS and basic auth). Each is read
// whole, at most 1 MiB, and parsed by decide/export/'s pure parser; an
// error names the flag and the file.
#pragma once

#include <string>
#include <vector>

#include "decide/export/counters_csv.h"
#include "decide/export/web_config.h"

namespace gpuenv {

/// Reads `path` and parses it (parse_dcgm_counters); *err starts with
/// "-f PATH: ".
bool load_dcgm_counters(const std::string& path, std::vector<DcgmCounter>* out, std::string* err);

/// Reads `path` and parses it (parse_web_config), relative paths in it
/// taken from the file's directory; *err starts with "--web-config-file
/// PATH: ".
bool load_web_config(const std::string& path, WebConfig* out, std::string* err);

}  // namespace gpuenv
