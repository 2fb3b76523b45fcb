// JSON as gpuenv writes it, the one home of the dump: a value that is not
// valid UTF-8 (a path, a GPU name, a command line read from /proc) is written
// with U+FFFD in place of the bad bytes, where nlohmann's plain dump() throws;
// and DEL and the C1 controls are written as \u escapes, so a document shown
// on a terminal carries no raw CSI (stdout's --json and stderr's JSON log alike).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace gpuenv {

/// A JSON text (valid UTF-8, as nlohmann's dump with the replace handler
/// writes it) with DEL and every C1 control (U+0080-U+009F) written as a
/// \u escape, which JSON readers decode to the same string. nlohmann already
/// escapes the C0 controls.
std::string json_escape_controls(std::string_view json);

/// Indented (two spaces unless told), with a final newline: what a --json
/// flag prints and a snapshot file holds.
template <typename Json>
std::string json_document(const Json& j, int indent = 2) {
  return json_escape_controls(j.dump(indent, ' ', false, Json::error_handler_t::replace)) + "\n";
}

/// On one line, no newline: a log record, a stored column.
template <typename Json>
std::string json_line(const Json& j) {
  return json_escape_controls(j.dump(-1, ' ', false, Json::error_handler_t::replace));
}

}  // namespace gpuenv
