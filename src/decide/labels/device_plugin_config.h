// What GPU Feature Discovery's labels read from the NVIDIA device plugin's
// config file (k8s-device-plugin, api/config/v1: the file its --config-file
// and GFD's take, YAML or JSON): the MIG strategy and the sharing of GPUs by
// time-slicing or MPS. docs/cluster.md, "GFD's labels".
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpuenv {

/// One entry of sharing.timeSlicing.resources or sharing.mps.resources.
struct ReplicatedResource {
  std::string name;    // "nvidia.com/gpu", "nvidia.com/mig-1g.10gb"
  std::string rename;  // "" unless renamed (renameByDefault: NAME.shared)
  int replicas = 1;
  friend bool operator==(const ReplicatedResource&, const ReplicatedResource&) = default;
};

struct DevicePluginConfig {
  std::optional<std::string> mig_strategy;  // flags.migStrategy: none|single|mixed
  std::vector<ReplicatedResource> time_slicing;
  /// sharing.mps; nullopt when the key is absent. Present, it is the
  /// sharing that counts, as in the device plugin (Sharing.ReplicatedResources).
  std::optional<std::vector<ReplicatedResource>> mps;
  friend bool operator==(const DevicePluginConfig&, const DevicePluginConfig&) = default;
};

/// GFD's sharing strategy: "mps" when MPS replicates a resource (replicas >
/// 1), else "time-slicing" when time-slicing does, else "none".
std::string sharing_strategy(const DevicePluginConfig& c);

/// The replication of resource `name` under the active sharing (MPS when
/// present, else time-slicing); nullptr when it is not replicated.
const ReplicatedResource* replication_of(const DevicePluginConfig& c, const std::string& name);

/// Parses the config file's text: JSON, or the block YAML such files are
/// written in (mappings, sequences, plain and quoted scalars, comments; a
/// flow collection or block scalar is kept as text, an error only where this
/// reads it). Keys this does not read are ignored; `version`, when present,
/// must be v1. False with *err naming the field and what was wrong.
bool parse_device_plugin_config(const std::string& text, DevicePluginConfig* out, std::string* err);

}  // namespace gpuenv
