#include "sys/env.h"

#include <cstdlib>

namespace gpuenv {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

}  // namespace gpuenv
