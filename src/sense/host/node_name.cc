#include "sense/host/node_name.h"

#include <unistd.h>

#include "sys/env.h"

namespace gpuenv {

std::string node_name() {
  if (std::string node = env_or("NODE_NAME", ""); !node.empty()) return node;
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

}  // namespace gpuenv
