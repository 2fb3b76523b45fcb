// JSON as gpuenv writes it, the one home of the dump: a value that is not
// valid UTF-8 (a path, a GPU name, a command line read from /proc) is written
// with U+FFFD in place of the bad bytes, where nlohmann's plain dump() throws.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace gpuenv {

/// Indented (two spaces unless told), with a final newline: what a --json
/// flag prints and a snapshot file holds.
template <typename Json>
std::string json_document(const Json& j, int indent = 2) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace) + "\n";
}

/// On one line, no newline: a log record, a stored column.
template <typename Json>
std::string json_line(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace gpuenv
