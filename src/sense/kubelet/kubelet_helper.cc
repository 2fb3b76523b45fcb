// gpuenv-kubelet: the gRPC client of the kubelet's pod-resources API
// (pod_resources.proto), as a program of its own that gpuenv export runs
// for each List (pod_resources.cc). gRPC's, protobuf's and abseil's static
// constructors, relocations and threads stay in this process, never in
// gpuenv's: every other command starts without them, and a crash of the
// client is a failed List, not a dead exporter.
//
//   gpuenv-kubelet SOCKET DEADLINE_MS MAX_ANSWER_BYTES
//
// Writes one JSON object to stdout and exits 0 (pod_resources.cc reads it):
//   {"ok": true, "devices": [[resource, device_id, pod, namespace, container], ...],
//    "logs": [[level, library, text], ...]}
//   {"ok": false, "code": GRPC_STATUS_CODE, "error": "what failed", "logs": [...]}
// level: 0 info, 1 warning, 2 error. Exit 2 on a usage error.
#include <google/protobuf/stubs/logging.h>
#include <grpc/support/log.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "sense/kubelet/pod_resources.grpc.pb.h"

namespace {

using nlohmann::json;

std::mutex logs_mutex;
json logs = json::array();  // the libraries' own lines, from any of their threads

void keep_log(int level, const char* library, const std::string& text) {
  std::lock_guard<std::mutex> lock(logs_mutex);
  logs.push_back({level, library, text});
}

void protobuf_log(google::protobuf::LogLevel level, const char*, int, const std::string& message) {
  keep_log(level == google::protobuf::LOGLEVEL_INFO ? 0 : level == google::protobuf::LOGLEVEL_WARNING ? 1 : 2,
           "libprotobuf", message);
}

void grpc_log(gpr_log_func_args* args) {
  keep_log(args->severity == GPR_LOG_SEVERITY_ERROR ? 2 : 0, "grpc", args->message != nullptr ? args->message : "");
}

std::string describe_code(grpc::StatusCode code, int max_answer_bytes) {
  switch (code) {
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "no answer in time";
    case grpc::StatusCode::UNAVAILABLE: return "unavailable";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "an answer over the " + std::to_string(max_answer_bytes) + " bytes gpuenv takes";
    default: return "gRPC status " + std::to_string(code);
  }
}

json list(const std::string& socket, long deadline_ms, int max_answer_bytes) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(max_answer_bytes);
  auto channel = grpc::CreateCustomChannel("unix:" + socket, grpc::InsecureChannelCredentials(), args);
  auto stub = v1::PodResourcesLister::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(deadline_ms));
  v1::ListPodResourcesRequest request;
  v1::ListPodResourcesResponse response;
  grpc::Status status = stub->List(&context, request, &response);
  if (!status.ok()) {
    std::string text = describe_code(status.error_code(), max_answer_bytes);
    if (!status.error_message().empty()) text += ": " + status.error_message();
    return {{"ok", false}, {"code", static_cast<int>(status.error_code())}, {"error", text}};
  }
  json devices = json::array();
  for (const v1::PodResources& pod : response.pod_resources())
    for (const v1::ContainerResources& container : pod.containers())
      for (const v1::ContainerDevices& d : container.devices())
        for (const std::string& id : d.device_ids())
          devices.push_back({d.resource_name(), id, pod.name(), pod.namespace_(), container.name()});
  return {{"ok", true}, {"devices", std::move(devices)}};
}

// A positive number from argv, or -1.
long positive(const char* text) {
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  return end != text && *end == '\0' && v > 0 ? v : -1;
}

}  // namespace

int main(int argc, char** argv) {
  long deadline_ms = argc == 4 ? positive(argv[2]) : -1, max_bytes = argc == 4 ? positive(argv[3]) : -1;
  if (deadline_ms < 0 || max_bytes < 0 || max_bytes > (1L << 30)) {
    std::fprintf(stderr,
                 "usage: gpuenv-kubelet SOCKET DEADLINE_MS MAX_ANSWER_BYTES (gpuenv export runs it; "
                 "see docs/metrics.md)\n");
    return 2;
  }
  google::protobuf::SetLogHandler(protobuf_log);
  gpr_set_log_function(grpc_log);
  json out = list(argv[1], deadline_ms, static_cast<int>(max_bytes));
  {
    std::lock_guard<std::mutex> lock(logs_mutex);
    out["logs"] = logs;
  }
  // Any byte a kubelet sent stays readable: invalid UTF-8 becomes U+FFFD.
  std::cout << out.dump(-1, ' ', false, json::error_handler_t::replace) << '\n' << std::flush;
  std::_Exit(std::cout ? 0 : 1);  // gRPC's threads are not waited for
}
