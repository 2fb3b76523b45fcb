// Machine::measurements in the snapshot: an optional "measurements" array,
// written only when there are some, so older snapshots stay valid.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/measurement.h"

namespace gpuenv {

/// Sets doc["measurements"] when `ms` is not empty.
void measurements_to_json(const std::vector<Measurement>& ms, nlohmann::json* doc);

/// Reads doc["measurements"] (absent or null: none). On a malformed entry
/// returns false with "measurements[2].value: ..." in *err.
bool measurements_from_json(const nlohmann::json& doc, std::vector<Measurement>* out, std::string* err);

nlohmann::json measurement_json(const Measurement& m);

}  // namespace gpuenv
