#include "sense/kubelet/pod_resources.h"

#include <google/protobuf/stubs/logging.h>
#include <grpc/support/log.h>
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

std::string describe_code(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "no answer in time";
    case grpc::StatusCode::UNAVAILABLE: return "unavailable";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "an answer over the " + std::to_string(kMaxKubeletAnswerBytes) + " bytes gpuenv takes";
    default: return "gRPC status " + std::to_string(code);
  }
}

std::string describe(const grpc::Status& status) {
  std::string code = describe_code(status.error_code());
  return status.error_message().empty() ? code : code + ": " + status.error_message();
}

LibraryLogSink& library_sink() {
  static LibraryLogSink sink;
  return sink;
}

void protobuf_log(google::protobuf::LogLevel level, const char*, int, const std::string& message) {
  Severity s = level == google::protobuf::LOGLEVEL_INFO      ? Severity::kInfo
               : level == google::protobuf::LOGLEVEL_WARNING ? Severity::kWarning
                                                             : Severity::kError;
  library_sink()(s, "libprotobuf", message);
}

void grpc_log(gpr_log_func_args* args) {
  Severity s = args->severity == GPR_LOG_SEVERITY_ERROR ? Severity::kError : Severity::kInfo;
  library_sink()(s, "grpc", args->message != nullptr ? args->message : "");
}

}  // namespace

void route_kubelet_library_logs(LibraryLogSink sink) {
  library_sink() = std::move(sink);
  google::protobuf::SetLogHandler(protobuf_log);
  gpr_set_log_function(grpc_log);
}

PodListStatus list_pod_devices(const std::string& socket, std::chrono::milliseconds deadline, PodDevices* out,
                               std::string* err, int* kind) {
  struct stat st;
  if (stat(socket.c_str(), &st) != 0) return PodListStatus::kNoSocket;
  // A channel per call: a kubelet that restarted is reached at once, not
  // after gRPC's reconnect backoff.
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxKubeletAnswerBytes);
  auto channel = grpc::CreateCustomChannel("unix:" + socket, grpc::InsecureChannelCredentials(), args);
  auto stub = v1::PodResourcesLister::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + deadline);
  v1::ListPodResourcesRequest request;
  v1::ListPodResourcesResponse response;
  grpc::Status status = stub->List(&context, request, &response);
  if (!status.ok()) {
    *err = "v1.PodResourcesLister/List on " + socket + ": " + describe(status);
    if (kind != nullptr) *kind = status.error_code();
    return PodListStatus::kFailed;
  }
  PodDevices devices;
  collect(response, &devices);
  *out = std::move(devices);
  return PodListStatus::kOk;
}

PodResourcesWatcher::~PodResourcesWatcher() { stop(); }

void PodResourcesWatcher::start(const std::string& socket, std::chrono::milliseconds interval,
                                std::chrono::milliseconds deadline, OnRound on_round) {
  socket_ = socket;
  deadline_ = deadline;
  on_round_ = std::move(on_round);
  thread_.start(interval, [this] { refresh(); }, [this] { refresh(); });
}

std::shared_ptr<const PodDevices> PodResourcesWatcher::latest() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return latest_;
}

void PodResourcesWatcher::refresh() {
  auto devices = std::make_shared<PodDevices>();
  PodListRound round;
  round.status = list_pod_devices(socket_, deadline_, devices.get(), &round.error, &round.kind);
  round.devices = devices->size();
  round.refused = devices->refused();
  round.refusal = devices->first_refusal();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    latest_ = std::move(devices);
  }
  bool changed = !reported_ || round.status != last_.status || round.kind != last_.kind;
  if (on_round_) on_round_(round, changed);
  reported_ = true;
  last_ = std::move(round);
}

void PodResourcesWatcher::stop() { thread_.stop(); }

}  // namespace gpuenv
