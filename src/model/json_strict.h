// JSON from files gpuenv does not control (snapshots, config.json): parsed
// without exceptions escaping, and refused when an object gives a key twice
// (which value wins differs between parsers).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace gpuenv {

/// Parses `text` into *out. False with *err "not valid JSON: ..." or
/// "gpus[0]: the key \"index\" is given twice" (`root` names the top level).
bool parse_json_strict(const std::string& text, nlohmann::json* out, std::string* err,
                       const std::string& root = "snapshot");

/// A reader's refusal, for `return json_fail(...)`: *err = "PATH: WHAT"
/// ("gpus[0].memory_total_bytes: out of range"), and false.
inline bool json_fail(const std::string& path, const std::string& what, std::string* err) {
  *err = path + ": " + what;
  return false;
}

}  // namespace gpuenv
