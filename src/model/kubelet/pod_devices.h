// Which container each GPU is assigned to, as the kubelet's pod-resources
// API lists it (sense/kubelet/pod_resources.h reads it): gpuenv export puts
// dcgm-exporter's pod, namespace and container labels on that device's
// series (docs/metrics.md). Pure.
#pragma once

#include <map>
#include <string>

#include "model/gpu_reading.h"

namespace gpuenv {

/// A container of a pod (dcgm-exporter's labels pod, namespace, container).
struct PodRef {
  std::string pod, ns, container;
  friend bool operator==(const PodRef&, const PodRef&) = default;
};

/// The longest names Kubernetes allows: a pod's is a DNS subdomain (253
/// bytes), a namespace's and a container's DNS labels (63).
inline constexpr std::size_t kMaxPodNameBytes = 253;
inline constexpr std::size_t kMaxNamespaceBytes = 63;
inline constexpr std::size_t kMaxContainerNameBytes = 63;

/// Why `pod`'s names cannot be labels ("a pod name of 3145728 bytes, over
/// the 253 Kubernetes allows"), or "" when they can. The text never holds
/// the names themselves.
std::string pod_ref_problem(const PodRef& pod);

/// The GPU assignments of one List: device ids of NVIDIA's resources
/// (nvidia.com/gpu, nvidia.com/mig-*) to the container holding them.
class PodDevices {
 public:
  /// Records `device_id` of `resource` as `pod`'s; other resources are
  /// ignored. Ids are taken in every form dcgm-exporter matches: a GPU's
  /// UUID or device name (nvidia0), a MIG device's UUID (MIG-…, or the
  /// pre-R470 MIG-GPU-…/GI/CI), GKE's nvidia0/gi3, and a shared GPU's
  /// replica (…::N, …/vgpuN) as its GPU. A `pod` whose names are longer
  /// than Kubernetes allows (pod_ref_problem) is refused: its device is
  /// left unlabelled, and refused() counts it.
  void add(const std::string& resource, const std::string& device_id, const PodRef& pod);
  /// The container `d` is assigned to, or nullptr. `parent` is a MIG
  /// device's GPU (nullptr for a whole GPU).
  const PodRef* find(const DeviceReading& d, const DeviceReading* parent) const;
  std::size_t size() const { return by_key_.size(); }
  bool empty() const { return by_key_.empty(); }
  /// Devices whose container add() refused, and why the first was.
  std::size_t refused() const { return refused_; }
  const std::string& first_refusal() const { return first_refusal_; }

 private:
  std::map<std::string, PodRef> by_key_;
  std::size_t refused_ = 0;
  std::string first_refusal_;
};

/// The key a kubelet device id is looked up by (the forms PodDevices::add
/// lists, each made one key).
std::string pod_device_key(const std::string& device_id);

}  // namespace gpuenv
