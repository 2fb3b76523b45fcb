#include "sense/kubelet/pod_resources.h"

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "sense/capture.h"
#include "sys/fs.h"
#include "sys/subprocess.h"

namespace gpuenv {
namespace {

using nlohmann::json;

LibraryLogSink& library_sink() {
  static auto* sink = new LibraryLogSink;  // a library thread may log at exit
  return *sink;
}

// The helper's time beyond the List's own deadline: its start and its exit.
constexpr std::chrono::milliseconds kHelperGrace{2000};

PodListStatus helper_failed(const std::string& text, std::string* err, int* kind) {
  *err = text;
  if (kind != nullptr) *kind = kKubeletHelperFailed;
  return PodListStatus::kFailed;
}

// A string field of the helper's answer, or nullptr.
const std::string* text_at(const json& array, std::size_t i) {
  return i < array.size() && array[i].is_string() ? array[i].get_ptr<const std::string*>() : nullptr;
}

void forward_logs(const json& logs) {
  if (!logs.is_array() || !library_sink()) return;
  for (const json& l : logs) {
    const std::string* library = l.is_array() ? text_at(l, 1) : nullptr;
    const std::string* text = l.is_array() ? text_at(l, 2) : nullptr;
    if (library == nullptr || text == nullptr || !l[0].is_number_integer()) continue;
    int level = l[0].get<int>();
    library_sink()(level == 0 ? Severity::kInfo : level == 1 ? Severity::kWarning : Severity::kError, *library,
                   *text);
  }
}

}  // namespace

std::string find_kubelet_helper(const std::string& env_value, std::string* err) {
  std::string tried;
  for (const std::string& path : fs::own_file_candidates(kKubeletHelperName, env_value, fs::executable_path())) {
    if (sys::is_executable_file(path)) return path;
    tried += (tried.empty() ? "" : ", ") + path;
  }
  *err = "gpuenv's kubelet client " + std::string(kKubeletHelperName) + " is not at " + tried +
         ": install it beside the gpuenv binary or in ../lib/gpuenv/ from it, or point " + kKubeletHelperEnv +
         " at it";
  return "";
}

void route_kubelet_library_logs(LibraryLogSink sink) { library_sink() = std::move(sink); }

PodListStatus read_kubelet_answer(const std::string& answer, PodDevices* out, std::string* err, int* kind) {
  json j = json::parse(answer, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("ok") || !j["ok"].is_boolean())
    return helper_failed("the kubelet client's answer is not its JSON object", err, kind);
  if (j.contains("logs")) forward_logs(j["logs"]);
  if (!j["ok"].get<bool>()) {
    const json& code = j.contains("code") ? j["code"] : json();
    const json& error = j.contains("error") ? j["error"] : json();
    if (!code.is_number_integer() || !error.is_string())
      return helper_failed("the kubelet client's failure has no code and error", err, kind);
    *err = error.get<std::string>();
    if (kind != nullptr) *kind = code.get<int>();
    return PodListStatus::kFailed;
  }
  if (!j.contains("devices") || !j["devices"].is_array())
    return helper_failed("the kubelet client's answer has no devices", err, kind);
  PodDevices devices;
  for (const json& d : j["devices"]) {
    const std::string* f[5] = {};
    for (std::size_t i = 0; i < 5; ++i) f[i] = d.is_array() && d.size() == 5 ? text_at(d, i) : nullptr;
    if (f[0] == nullptr || f[1] == nullptr || f[2] == nullptr || f[3] == nullptr || f[4] == nullptr)
      return helper_failed("a device in the kubelet client's answer is not 5 strings", err, kind);
    devices.add(*f[0], *f[1], {*f[2], *f[3], *f[4]});
  }
  *out = std::move(devices);
  return PodListStatus::kOk;
}

PodListStatus list_pod_devices(const std::string& socket, std::chrono::milliseconds deadline, PodDevices* out,
                               std::string* err, int* kind, const std::string& helper_env) {
  struct stat st;
  if (stat(socket.c_str(), &st) != 0) return PodListStatus::kNoSocket;
  std::string why;
  std::string helper = find_kubelet_helper(helper_env, &why);
  if (helper.empty()) return helper_failed(why, err, kind);
  CaptureLimits limits;
  limits.timeout_ms = static_cast<int>((deadline + kHelperGrace).count());
  limits.max_bytes = 8 * static_cast<std::size_t>(kMaxKubeletAnswerBytes);  // JSON of a full answer, and logs
  std::string answer;
  if (!capture_output({helper, socket, std::to_string(deadline.count()), std::to_string(kMaxKubeletAnswerBytes)},
                      limits, &answer, &why))
    return helper_failed("the kubelet client failed: " + why, err, kind);
  PodListStatus s = read_kubelet_answer(answer, out, &why, kind);
  if (s == PodListStatus::kFailed) *err = "v1.PodResourcesLister/List on " + socket + ": " + why;
  return s;
}

PodResourcesWatcher::~PodResourcesWatcher() { stop(); }

void PodResourcesWatcher::start(const std::string& socket, std::chrono::milliseconds interval,
                                std::chrono::milliseconds deadline, OnRound on_round, const std::string& helper_env) {
  socket_ = socket;
  helper_env_ = helper_env;
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
  round.status = list_pod_devices(socket_, deadline_, devices.get(), &round.error, &round.kind, helper_env_);
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
