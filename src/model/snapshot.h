// The Machine snapshot: versioned JSON, documented in docs/snapshot.md.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "model/machine.h"

namespace gpuenv {

/// The most GPUs, and MIG devices in all, a snapshot may hold: far above any
/// one machine (NVML sees 16 at most today), low enough that every rule's
/// work over them stays small. A snapshot over either is refused.
inline constexpr std::size_t kMaxSnapshotGpus = 4096;
inline constexpr std::size_t kMaxSnapshotMigDevices = 4096;

/// Serializes a Machine; unknown values are written as null.
std::string machine_to_json(const Machine& m, int indent = 2);
/// The same as a JSON value (machine_to_json is its json_document).
nlohmann::json machine_json(const Machine& m);

/// Parses a snapshot. On failure returns false and sets *err to a message
/// naming the offending field ("gpus[1].compute_capability: ...").
/// Unknown fields are ignored (newer writers); a newer schema_version than
/// this build understands, a key given twice in one object, and more GPUs
/// or MIG devices than the limits above are errors.
bool machine_from_json(const std::string& text, Machine* out, std::string* err);

}  // namespace gpuenv
