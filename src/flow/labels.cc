#include "flow/labels.h"

#include <signal.h>
#include <sys/stat.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "decide/node_labels.h"
#include "diagnose/doctor.h"
#include "model/exit_codes.h"
#include "model/json_text.h"
#include "sys/fs.h"
#include "sys/signals.h"
#include "sys/text.h"

namespace gpuenv::flow {
namespace {

// GFD's own feature file in features.d (its --output-file default).
constexpr const char* kGfdFeatureFile = "gfd";

const std::vector<int> kStop = {SIGTERM, SIGINT};

// What the rounds carry from one to the next.
struct Rounds {
  const LabelsRequest& req;
  const LabelsEnv& env;
  bool said_gfd = false;  // the yield to GFD's file is said once, and again after it went away
};

bool to_stdout(const LabelsRequest& r) { return r.json || sys::is_stdout(r.output); }

// GFD's feature file in the directory the labels go to (features.d, when
// they go to stdout), or "" when there is none.
std::string gfd_file(const LabelsRequest& r) {
  std::string dir = to_stdout(r) ? r.features_dir : fs::dirname(r.output);
  std::string path = dir + "/" + kGfdFeatureFile;
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) ? path : "";
}

// With GFD's file beside ours NFD would take the later file's value of each
// nvidia.com label (it reads features.d in name order: gpuenv after gfd), so
// gpuenv leaves nvidia.com/ to GFD and says so.
void yield_to_gfd(Rounds* r, LabelSet* labels) {
  std::string gfd = r->req.ns == kNvidiaNamespace ? gfd_file(r->req) : "";
  if (gfd.empty()) return void(r->said_gfd = false);
  labels->nvidia.clear();
  if (r->said_gfd) return;
  r->said_gfd = true;
  r->env.log(Severity::kWarning, "gfd present",
             "labels: " + gfd + " is GPU Feature Discovery's: the nvidia.com/ labels are left to it, and only "
             "gpuenv.dev/ ones written",
             {{"path", gfd}});
}

// --device-plugin-config, read each round (a ConfigMap volume changes under us).
bool label_options(const Rounds& r, LabelOptions* o) {
  o->ns = r.req.ns == kNvidiaNamespace ? LabelNamespace::kNvidia : LabelNamespace::kGpuenv;
  const std::string& path = r.req.device_plugin_config;
  if (path.empty()) return true;
  std::string text, err;
  DevicePluginConfig c;
  if (!fs::read_file(path, &text, &err) || !parse_device_plugin_config(text, &c, &err)) {
    r.env.log(Severity::kError, "bad device plugin config", "labels: --device-plugin-config " + path + ": " + err,
              {{"path", path}, {"error", err}});
    return false;
  }
  o->device_plugin = std::move(c);
  return true;
}

// Without --output, features.d's parent must exist: where it does not, this
// is no node NFD runs on, and retrying every round would never write.
bool no_features_parent(const LabelsRequest& r) {
  return !r.output_given && !r.json && !fs::is_dir(fs::dirname(r.features_dir));
}

int say_no_features_parent(const Rounds& r) {
  std::string parent = fs::dirname(r.req.features_dir);
  r.env.log(Severity::kError, "no features.d",
            "labels: " + parent + " does not exist, so this is not a node where Node Feature Discovery "
            "keeps its features.d; give --output FILE, --output - (stdout) or --json",
            {{"path", parent}});
  return kExitFailure;
}

// --json: {"expiry": RFC 3339, "labels": {"gpuenv.dev/NAME": "VALUE", ...}}.
std::string labels_json(const LabelSet& labels, const std::string& expiry) {
  nlohmann::ordered_json j = {{"expiry", expiry}, {"labels", nlohmann::ordered_json::object()}};
  for (const auto& [name, value] : qualified_labels(labels)) j["labels"][name] = value;
  return json_document(j);
}

// The round's labels, or false when the machine or the device plugin's
// config cannot be read.
bool sense_labels(Rounds* r, LabelSet* labels) {
  Machine m;
  Options o;
  LabelOptions options;
  if (!label_options(*r, &options) || !r->env.sense(&m, &o)) return false;
  std::string verdict = status_name(worst(diagnose(m, o)));
  std::vector<std::string> dropped;
  *labels = node_label_set(m, verdict, options, &dropped);
  yield_to_gfd(r, labels);
  for (const auto& why : dropped)
    r->env.log(Severity::kWarning, "label dropped", "labels: left out " + why, {{"label", why}});
  return true;
}

// The file's content, or false (with *code) when the machine cannot be read
// or the file would pass NFD's size limit. Labels expire after three rounds:
// one missed round keeps them, a dead writer does not.
bool render_round(Rounds* r, std::string* out, int* code) {
  LabelSet labels;
  if (!sense_labels(r, &labels)) return *code = kExitBadInput, false;
  std::string expiry = utc_time(r->env.clock() + 3 * r->req.interval_s);
  if (r->req.json) return *out = labels_json(labels, expiry), true;
  *out = namespaced_feature_file(labels, expiry);
  if (out->size() < kFeatureFileLimit) return true;
  r->env.log(Severity::kError, "too large",
             "labels: the feature file would be " + std::to_string(out->size()) +
                 " bytes; NFD ignores files of 64 KiB or more",
             {{"bytes", out->size()}});
  return *code = kExitFailure, false;
}

bool write_round(const Rounds& r, const std::string& output, const std::string& content) {
  std::string err;
  if (r.env.write(output, content, 0644, &err)) return true;
  r.env.log(Severity::kError, "write failed", "labels: " + err, {{"path", output}, {"error", err}});
  return false;
}

int one_round(Rounds* r) {
  std::string content;
  int code = kExitOk;
  if (!render_round(r, &content, &code)) return code;
  if (no_features_parent(r->req)) return say_no_features_parent(*r);
  return write_round(*r, r->req.json ? "-" : r->req.output, content) ? kExitOk : kExitFailure;
}

// Rounds until a stop; one that comes while sensing ends the loop at the
// next wait. A bad --machine ends it, and so does a default output whose
// features.d has no parent; another failed write is reported and tried
// again next round.
int loop(Rounds* r) {
  r->env.stop->hold();
  for (;;) {
    int code = one_round(r);
    if (code == kExitBadInput || (code != kExitOk && no_features_parent(r->req))) return code;
    if (r->env.stop->wait(r->req.interval_s)) return kExitOk;
  }
}

}  // namespace

std::string features_dir() {
  const char* dir = std::getenv("GPUENV_FEATURES_D");
  return dir && *dir ? dir : kDefaultFeaturesDir;
}

void SignalStop::hold() { sys::block_signals(kStop); }

bool SignalStop::wait(int seconds) {
  sigset_t stop = sys::signal_set(kStop);
  timespec wait{seconds, 0};
  return sigtimedwait(&stop, nullptr, &wait) >= 0;
}

int run_labels(const LabelsRequest& request, const LabelsEnv& env) {
  Rounds rounds{request, env};
  return request.once || request.json ? one_round(&rounds) : loop(&rounds);
}

}  // namespace gpuenv::flow
