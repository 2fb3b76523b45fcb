// The Machine snapshot: versioned JSON, documented in docs/snapshot.md.
#pragma once

#include <string>

#include "model/machine.h"

namespace gpuenv {

/// Serializes a Machine; unknown values are written as null.
std::string machine_to_json(const Machine& m, int indent = 2);

/// Parses a snapshot. On failure returns false and sets *err to a message
/// naming the offending field ("gpus[1].compute_capability: ...").
/// Unknown fields are ignored (newer writers); a newer schema_version than
/// this build understands is an error.
bool machine_from_json(const std::string& text, Machine* out, std::string* err);

}  // namespace gpuenv
