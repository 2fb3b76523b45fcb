#include "sense/kubelet/pod_resources.h"

#include <grpcpp/grpcpp.h>
#include <sys/stat.h>

#include "sense/kubelet/pod_resources.grpc.pb.h"

namespace gpuenv {
namespace {

void collect(const v1::ListPodResourcesResponse& response, PodDevices* out) {
  for (const v1::PodResources& pod : response.pod_resources())
    for (const v1::ContainerResources& container : pod.containers())
      for (const v1::ContainerDevices& devices : container.devices())
        for (const std::string& id : devices.device_ids())
          out->add(devices.resource_name(), id, {pod.name(), pod.namespace_(), container.name()});
}

std::string describe(const grpc::Status& status) {
  std::string code = status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ? "no answer in time"
                     : status.error_code() == grpc::StatusCode::UNAVAILABLE    ? "unavailable"
                                                                               : "gRPC status " +
                                                                     std::to_string(status.error_code());
  return status.error_message().empty() ? code : code + ": " + status.error_message();
}

}  // namespace

PodListStatus list_pod_devices(const std::string& socket, std::chrono::milliseconds deadline, PodDevices* out,
                               std::string* err) {
  struct stat st;
  if (stat(socket.c_str(), &st) != 0) return PodListStatus::kNoSocket;
  // A channel per call: a kubelet that restarted is reached at once, not
  // after gRPC's reconnect backoff.
  auto channel = grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials());
  auto stub = v1::PodResourcesLister::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + deadline);
  v1::ListPodResourcesRequest request;
  v1::ListPodResourcesResponse response;
  grpc::Status status = stub->List(&context, request, &response);
  if (!status.ok()) {
    *err = "v1.PodResourcesLister/List on " + socket + ": " + describe(status);
    return PodListStatus::kFailed;
  }
  PodDevices devices;
  collect(response, &devices);
  *out = std::move(devices);
  return PodListStatus::kOk;
}

PodResourcesWatcher::~PodResourcesWatcher() { stop(); }

void PodResourcesWatcher::start(const std::string& socket, std::chrono::milliseconds interval,
                                std::chrono::milliseconds deadline, OnChange on_change) {
  socket_ = socket;
  deadline_ = deadline;
  on_change_ = std::move(on_change);
  thread_.start(interval, [this] { refresh(); }, [this] { refresh(); });
}

std::shared_ptr<const PodDevices> PodResourcesWatcher::latest() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return latest_;
}

void PodResourcesWatcher::refresh() {
  auto devices = std::make_shared<PodDevices>();
  std::string err;
  PodListStatus status = list_pod_devices(socket_, deadline_, devices.get(), &err);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    latest_ = std::move(devices);
  }
  bool changed = !reported_ || status != last_status_ || err != last_error_;
  if (changed && on_change_) on_change_(status, err, latest()->size());
  reported_ = true;
  last_status_ = status;
  last_error_ = err;
}

void PodResourcesWatcher::stop() { thread_.stop(); }

}  // namespace gpuenv
