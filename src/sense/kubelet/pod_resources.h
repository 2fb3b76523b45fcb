// The kubelet's pod-resources API (gRPC v1.PodResourcesLister/List on a
// unix socket, pod_resources.proto): which container holds which GPU, for
// gpuenv export's pod, namespace and container labels. One call has a
// deadline; PodResourcesWatcher calls it from its own thread, so a scrape
// never waits on the kubelet. The gRPC client itself is a program of its
// own, gpuenv-kubelet (kubelet_helper.cc), run for each List that finds a
// socket: gRPC's start-up is paid by export on a node, never by the other
// commands, and a crash in it fails one List, not the exporter.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "model/plan.h"  // Severity
#include "model/kubelet/pod_devices.h"
#include "sys/periodic.h"

namespace gpuenv {

/// Where the kubelet serves the API (dcgm-exporter's default too).
inline constexpr const char* kKubeletPodResourcesSocket = "/var/lib/kubelet/pod-resources/kubelet.sock";

enum class PodListStatus {
  kOk,
  kNoSocket,  // nothing at the path: not a Kubernetes node, or not mounted
  kFailed,    // refused, timed out, or answered an error (*err says which),
              // or the client program could not run
};

/// The client program, and the variable that points at it (fs::own_file_candidates
/// in sys/fs.h says where else it is looked for).
inline constexpr const char* kKubeletHelperName = "gpuenv-kubelet";
inline constexpr const char* kKubeletHelperEnv = "GPUENV_KUBELET_HELPER";
/// *kind when the helper could not be found or run (gRPC's codes are 0 to 16).
inline constexpr int kKubeletHelperFailed = -1;

/// Where the helper is: the first of fs::own_file_candidates (`env_value`:
/// $GPUENV_KUBELET_HELPER) that is an executable file. "" with every
/// candidate and the fix in *err when none is.
std::string find_kubelet_helper(const std::string& env_value, std::string* err);

/// The largest List answer taken (gRPC's default is 4 MiB): a node's
/// pods, their names within Kubernetes' limits, fit many times over.
inline constexpr int kMaxKubeletAnswerBytes = 1 << 20;

/// One List call on the unix socket `socket`, ended after `deadline`,
/// by the helper (find_kubelet_helper with `helper_env`). kOk fills *out
/// with the GPU assignments. kFailed sets *err, and *kind to the gRPC
/// status code (the same kind of failure, whatever its text) or
/// kKubeletHelperFailed.
PodListStatus list_pod_devices(const std::string& socket, std::chrono::milliseconds deadline, PodDevices* out,
                               std::string* err, int* kind = nullptr, const std::string& helper_env = "");

/// Reads the helper's answer (kubelet_helper.cc's JSON): its devices into
/// *out, its library lines to the sink of route_kubelet_library_logs. As
/// list_pod_devices; an answer that is not the helper's format is kFailed
/// naming what is wrong.
PodListStatus read_kubelet_answer(const std::string& answer, PodDevices* out, std::string* err, int* kind);

/// Where libprotobuf's and gRPC's own messages go from now on, instead of
/// their unformatted lines on stderr: `sink` gets the library's name
/// ("libprotobuf", "grpc"), the level and the text, from any thread. Call
/// it once, before the first List, with a callable `sink` (the helper's
/// lines come back with its answer).
using LibraryLogSink = std::function<void(Severity, const std::string& library, const std::string& text)>;
void route_kubelet_library_logs(LibraryLogSink sink);

/// What one round of the watcher found.
struct PodListRound {
  PodListStatus status = PodListStatus::kNoSocket;
  int kind = 0;             // kFailed: the gRPC status code
  std::string error;        // kFailed: what failed
  std::size_t devices = 0;  // the GPU and MIG devices labelled
  std::size_t refused = 0;  // devices left unlabelled: their names are longer than Kubernetes allows
  std::string refusal;      // why the first of them was
};

/// A thread that lists the kubelet's assignments at start and then every
/// `interval`. latest() is the last List's; empty while the socket is
/// missing or the last call failed (no labels rather than stale ones).
class PodResourcesWatcher {
 public:
  /// Told after every round; `changed` when its status or kind of failure
  /// differs from the round before (always for the first).
  using OnRound = std::function<void(const PodListRound& round, bool changed)>;

  PodResourcesWatcher() = default;
  ~PodResourcesWatcher();
  PodResourcesWatcher(const PodResourcesWatcher&) = delete;
  PodResourcesWatcher& operator=(const PodResourcesWatcher&) = delete;

  /// `helper_env`: $GPUENV_KUBELET_HELPER (find_kubelet_helper).
  void start(const std::string& socket, std::chrono::milliseconds interval, std::chrono::milliseconds deadline,
             OnRound on_round, const std::string& helper_env = "");
  std::shared_ptr<const PodDevices> latest() const;
  /// Ends the thread (after a call in progress, at most its deadline).
  void stop();

 private:
  void refresh();

  std::string socket_, helper_env_;
  std::chrono::milliseconds deadline_{1000};
  OnRound on_round_;
  PodListRound last_;  // the thread's own
  bool reported_ = false;
  mutable std::mutex mutex_;  // latest_
  std::shared_ptr<const PodDevices> latest_ = std::make_shared<const PodDevices>();
  Periodic thread_;  // last: it stops before the members its rounds use go
};

}  // namespace gpuenv
