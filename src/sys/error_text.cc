#include "sys/error_text.h"

#include <cstring>

namespace gpuenv::sys {

std::string errno_text(const std::string& call, const std::string& arg, int e) {
  return call + "(" + arg + "): " + std::strerror(e);
}

std::string errno_text(const std::string& what, int e) { return what + ": " + std::strerror(e); }

}  // namespace gpuenv::sys
