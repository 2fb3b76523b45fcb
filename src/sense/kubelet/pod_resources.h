// The kubelet's pod-resources API (gRPC v1.PodResourcesLister/List on a
// unix socket, pod_resources.proto): which container holds which GPU, for
// gpuenv export's pod, namespace and container labels. One call has a
// deadline; PodResourcesWatcher calls it from its own thread, so a scrape
// never waits on the kubelet.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "model/pod_devices.h"
#include "sys/periodic.h"

namespace gpuenv {

/// Where the kubelet serves the API (dcgm-exporter's default too).
inline constexpr const char* kKubeletPodResourcesSocket = "/var/lib/kubelet/pod-resources/kubelet.sock";

enum class PodListStatus {
  kOk,
  kNoSocket,  // nothing at the path: not a Kubernetes node, or not mounted
  kFailed,    // refused, timed out, or answered an error (*err says which)
};

/// One List call on the unix socket `socket`, ended after `deadline`.
/// kOk fills *out with the GPU assignments.
PodListStatus list_pod_devices(const std::string& socket, std::chrono::milliseconds deadline, PodDevices* out,
                               std::string* err);

/// A thread that lists the kubelet's assignments at start and then every
/// `interval`. latest() is the last List's; empty while the socket is
/// missing or the last call failed (no labels rather than stale ones).
class PodResourcesWatcher {
 public:
  /// Told when the state changes: the status, and for kFailed the error.
  using OnChange = std::function<void(PodListStatus, const std::string& error, std::size_t devices)>;

  PodResourcesWatcher() = default;
  ~PodResourcesWatcher();
  PodResourcesWatcher(const PodResourcesWatcher&) = delete;
  PodResourcesWatcher& operator=(const PodResourcesWatcher&) = delete;

  void start(const std::string& socket, std::chrono::milliseconds interval, std::chrono::milliseconds deadline,
             OnChange on_change);
  std::shared_ptr<const PodDevices> latest() const;
  /// Ends the thread (after a call in progress, at most its deadline).
  void stop();

 private:
  void refresh();

  std::string socket_;
  std::chrono::milliseconds deadline_{1000};
  OnChange on_change_;
  PodListStatus last_status_ = PodListStatus::kNoSocket;  // the thread's own
  std::string last_error_;
  bool reported_ = false;
  mutable std::mutex mutex_;  // latest_
  std::shared_ptr<const PodDevices> latest_ = std::make_shared<const PodDevices>();
  Periodic thread_;  // last: it stops before the members its rounds use go
};

}  // namespace gpuenv
