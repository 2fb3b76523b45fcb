// The name dcgm-exporter labels a node's series with (hostname): the name
// Kubernetes knows the node by, else the host's own.
#pragma once

#include <string>

namespace gpuenv {

/// $NODE_NAME (as dcgm-exporter's DaemonSet sets it) when set and not
/// empty, else host_name().
std::string node_name();

/// The host's own name, gethostname(2); "" when that fails.
std::string host_name();

}  // namespace gpuenv
