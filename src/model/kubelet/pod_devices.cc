#include "model/kubelet/pod_devices.h"

#include <vector>

namespace gpuenv {
namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool is_nvidia_resource(const std::string& resource) {
  return resource == "nvidia.com/gpu" || starts_with(resource, "nvidia.com/mig-");
}

std::string cut_at(const std::string& s, const char* separator) {
  std::size_t at = s.find(separator);
  return at == std::string::npos ? s : s.substr(0, at);
}

// Every key a device may be listed under.
std::vector<std::string> keys_of(const DeviceReading& d, const DeviceReading* parent) {
  std::vector<std::string> keys;
  if (d.uuid) keys.push_back(*d.uuid);
  const DeviceReading& gpu = parent ? *parent : d;
  std::string name = gpu.minor_number ? "nvidia" + std::to_string(*gpu.minor_number) : "";
  if (!d.mig) {
    if (!name.empty()) keys.push_back(name);
    return keys;
  }
  if (!d.gpu_instance_id) return keys;
  std::string gi = std::to_string(*d.gpu_instance_id);
  if (gpu.uuid) keys.push_back(*gpu.uuid + "/" + gi);
  if (!name.empty()) keys.push_back(name + "/gi" + gi);
  return keys;
}

std::string too_long(const char* what, std::size_t size, std::size_t most) {
  return std::string("a ") + what + " of " + std::to_string(size) + " bytes, over the " + std::to_string(most) +
         " Kubernetes allows";
}

}  // namespace

std::string pod_ref_problem(const PodRef& pod) {
  if (pod.pod.size() > kMaxPodNameBytes) return too_long("pod name", pod.pod.size(), kMaxPodNameBytes);
  if (pod.ns.size() > kMaxNamespaceBytes) return too_long("namespace", pod.ns.size(), kMaxNamespaceBytes);
  if (pod.container.size() > kMaxContainerNameBytes)
    return too_long("container name", pod.container.size(), kMaxContainerNameBytes);
  return "";
}

std::string pod_device_key(const std::string& device_id) {
  std::string id = cut_at(cut_at(device_id, "::"), "/vgpu");
  // MIG-GPU-<uuid>/<GI>/<CI> (drivers before R470): the GPU and instance.
  if (starts_with(id, "MIG-GPU-")) {
    std::size_t gi = id.find('/'), ci = id.rfind('/');
    if (gi != std::string::npos && ci > gi + 1) return id.substr(4, ci - 4);
  }
  return id;
}

void PodDevices::add(const std::string& resource, const std::string& device_id, const PodRef& pod) {
  if (!is_nvidia_resource(resource) || device_id.empty()) return;
  if (std::string problem = pod_ref_problem(pod); !problem.empty()) {
    if (refused_++ == 0) first_refusal_ = std::move(problem);
    return;
  }
  by_key_[pod_device_key(device_id)] = pod;
}

const PodRef* PodDevices::find(const DeviceReading& d, const DeviceReading* parent) const {
  for (const std::string& key : keys_of(d, parent))
    if (auto it = by_key_.find(key); it != by_key_.end()) return &it->second;
  return nullptr;
}

}  // namespace gpuenv
