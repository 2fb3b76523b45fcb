// An optional value as JSON: the value, or null when unknown (never 0).
// The one helper every JSON writer in model/ uses for it.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

namespace gpuenv {

template <typename T>
nlohmann::json opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace gpuenv
