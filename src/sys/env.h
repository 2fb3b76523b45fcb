// The process's environment variables, read.
#pragma once

#include <string>

namespace gpuenv {

/// The environment variable `name`, or `fallback` when it is unset or empty.
std::string env_or(const char* name, const std::string& fallback);

}  // namespace gpuenv
