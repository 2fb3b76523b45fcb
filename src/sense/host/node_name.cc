#include "sense/host/node_name.h"

#include <limits.h>
#include <unistd.h>

#include "sys/env.h"

namespace gpuenv {

std::string node_name() {
  if (std::string node = env_or("NODE_NAME", ""); !node.empty()) return node;
  return host_name();
}

std::string host_name() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (gethostname(buf, HOST_NAME_MAX) != 0) return "";
  return buf;
}

}  // namespace gpuenv
