// labels: Node Feature Discovery's local-source feature file. Each round
// senses what doctor senses, judges with doctor's checks, and replaces the
// file atomically; without --once it repeats every --interval seconds until
// SIGTERM or SIGINT, which end it with status 0 (docs/cluster.md). With
// --namespace nvidia.com it writes GFD's labels too, unless GFD's own file
// sits beside it.
#include <signal.h>
#include <sys/stat.h>

#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>

#include "cli/context.h"
#include "cli/commands.h"
#include "model/exit_codes.h"
#include "decide/node_labels.h"
#include "diagnose/doctor.h"
#include "model/json_text.h"
#include "sys/text.h"
#include "sys/fs.h"
#include "sys/file_write.h"
#include "sys/signals.h"

namespace gpuenv {
namespace {

constexpr const char* kDefaultFeaturesDir = "/etc/kubernetes/node-feature-discovery/features.d";

// NFD's features.d: GPUENV_FEATURES_D, else where NFD's Helm chart mounts it.
std::string features_dir() {
  const char* dir = std::getenv("GPUENV_FEATURES_D");
  return dir && *dir ? dir : kDefaultFeaturesDir;
}

constexpr const char* kNvidiaNamespace = "nvidia.com";

// GFD's own feature file in features.d (its --output-file default).
constexpr const char* kGfdFeatureFile = "gfd";

struct LabelFlags {
  std::string output = features_dir() + "/gpuenv";
  bool once = false, json = false, output_given = false;
  int interval_s = 60;
  std::string ns = "gpuenv.dev";
  std::string device_plugin_config;  // "": none
  bool said_gfd = false;  // the yield to GFD's file is said once, and again after it went away
};

bool to_stdout(const LabelFlags& f) { return f.json || f.output == "-" || f.output == "/dev/stdout"; }

// GFD's feature file in the directory the labels go to (features.d, when
// they go to stdout), or "" when there is none.
std::string gfd_file(const LabelFlags& f) {
  std::string dir = to_stdout(f) ? features_dir() : fs::dirname(f.output);
  std::string path = dir + "/" + kGfdFeatureFile;
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) ? path : "";
}

// With GFD's file beside ours NFD would take the later file's value of each
// nvidia.com label (it reads features.d in name order: gpuenv after gfd), so
// gpuenv leaves nvidia.com/ to GFD and says so.
void yield_to_gfd(LabelFlags* f, LabelSet* labels) {
  std::string gfd = f->ns == kNvidiaNamespace ? gfd_file(*f) : "";
  if (gfd.empty()) return void(f->said_gfd = false);
  labels->nvidia.clear();
  if (f->said_gfd) return;
  f->said_gfd = true;
  log_message(Severity::kWarning, "gfd present",
              "labels: " + gfd + " is GPU Feature Discovery's: the nvidia.com/ labels are left to it, and only "
              "gpuenv.dev/ ones written",
              {{"path", gfd}});
}

// --device-plugin-config, read each round (a ConfigMap volume changes under us).
bool label_options(const LabelFlags& f, LabelOptions* o) {
  o->ns = f.ns == kNvidiaNamespace ? LabelNamespace::kNvidia : LabelNamespace::kGpuenv;
  if (f.device_plugin_config.empty()) return true;
  std::string text, err;
  DevicePluginConfig c;
  if (!fs::read_file(f.device_plugin_config, &text, &err) || !parse_device_plugin_config(text, &c, &err)) {
    log_message(Severity::kError, "bad device plugin config",
                "labels: --device-plugin-config " + f.device_plugin_config + ": " + err,
                {{"path", f.device_plugin_config}, {"error", err}});
    return false;
  }
  o->device_plugin = std::move(c);
  return true;
}

// Without --output, features.d's parent must exist: where it does not, this
// is no node NFD runs on, and retrying every round would never write.
bool no_features_parent(const LabelFlags& f) {
  if (f.output_given || f.json) return false;
  struct stat st;
  return stat(fs::dirname(features_dir()).c_str(), &st) != 0 || !S_ISDIR(st.st_mode);
}

void say_no_features_parent() {
  std::string parent = fs::dirname(features_dir());
  log_message(Severity::kError, "no features.d",
              "labels: " + parent + " does not exist, so this is not a node where Node Feature Discovery "
              "keeps its features.d; give --output FILE, --output - (stdout) or --json",
              {{"path", parent}});
}

// --json: {"expiry": RFC 3339, "labels": {"gpuenv.dev/NAME": "VALUE", ...}}.
std::string labels_json(const LabelSet& labels, const std::string& expiry) {
  nlohmann::ordered_json j = {{"expiry", expiry}, {"labels", nlohmann::ordered_json::object()}};
  for (const auto& [name, value] : qualified_labels(labels)) j["labels"][name] = value;
  return json_document(j);
}

// The file's content, or false (with *err) when the machine cannot be read
// or the file would pass NFD's size limit. Labels expire after three rounds:
// one missed round keeps them, a dead writer does not.
bool render_round(Context* ctx, LabelFlags& f, std::string* out, int* code) {
  ctx->store_patience = {};  // each round waits for a locked store afresh, and says so again
  Machine m;
  LabelOptions options;
  if (!label_options(f, &options) || !ctx->load_machine(&m)) {
    *code = kExitBadInput;
    return false;
  }
  std::string verdict = status_name(worst(diagnose(m, ctx->plan_options(m))));
  std::vector<std::string> dropped;
  LabelSet labels = node_label_set(m, verdict, options, &dropped);
  yield_to_gfd(&f, &labels);
  for (const auto& why : dropped)
    log_message(Severity::kWarning, "label dropped", "labels: left out " + why, {{"label", why}});
  std::string expiry = utc_time(std::time(nullptr) + 3 * f.interval_s);
  if (f.json) return *out = labels_json(labels, expiry), true;
  *out = namespaced_feature_file(labels, expiry);
  if (out->size() >= kFeatureFileLimit) {
    log_message(Severity::kError, "too large",
                "labels: the feature file would be " + std::to_string(out->size()) +
                    " bytes; NFD ignores files of 64 KiB or more",
                {{"bytes", out->size()}});
    *code = kExitFailure;
    return false;
  }
  return true;
}

bool write_round(const std::string& output, const std::string& content) {
  std::string err;
  if (sys::write_output(output, content, 0644, &err)) return true;
  log_message(Severity::kError, "write failed", "labels: " + err, {{"path", output}, {"error", err}});
  return false;
}

int one_round(Context* ctx, LabelFlags& f) {
  std::string content;
  int code = kExitOk;
  if (!render_round(ctx, f, &content, &code)) return code;
  if (no_features_parent(f)) return say_no_features_parent(), int(kExitFailure);
  return write_round(f.json ? "-" : f.output, content) ? int(kExitOk) : int(kExitFailure);
}

// Rounds until SIGTERM or SIGINT; both stay blocked, so a signal that comes
// while sensing ends the loop at the next wait. A bad --machine ends it, and
// so does a default output whose features.d has no parent; another failed
// write is reported and tried again next round.
int loop(Context* ctx, LabelFlags& f) {
  const std::vector<int> kStop = {SIGTERM, SIGINT};
  sys::block_signals(kStop);
  sigset_t stop = sys::signal_set(kStop);
  for (;;) {
    int code = one_round(ctx, f);
    if (code == kExitBadInput || (code != kExitOk && no_features_parent(f))) return code;
    timespec wait{f.interval_s, 0};
    if (sigtimedwait(&stop, nullptr, &wait) >= 0) return kExitOk;
  }
}

}  // namespace

std::function<int()> setup_labels(CLI::App* sub, Context* ctx) {
  auto f = std::make_shared<LabelFlags>();
  CLI::Option* output =
      sub->add_option("--output", f->output,
                      std::string("The feature file; - for stdout (default ") + kDefaultFeaturesDir +
                          "/gpuenv, or under $GPUENV_FEATURES_D)")
          ->option_text("FILE");
  sub->add_flag("--json", f->json, "Print the labels once as JSON on stdout; write no file")->excludes(output);
  sub->add_flag("--once", f->once, "Write once and exit (default: every --interval until SIGTERM)");
  sub->add_option("--interval", f->interval_s, "Seconds between rounds (default 60)")
      ->check(CLI::Range(1, 86400))
      ->option_text("SECONDS");
  sub->add_option("--namespace", f->ns,
                  "Where GPU Feature Discovery's labels go: gpuenv.dev (default: gpuenv's names) or nvidia.com "
                  "(GFD's own labels; gpuenv's others stay under gpuenv.dev)")
      ->check(CLI::IsMember({"gpuenv.dev", kNvidiaNamespace}))
      ->option_text("gpuenv.dev|nvidia.com");
  CLI::Option* config =
      sub->add_option("--device-plugin-config", f->device_plugin_config,
                      "The NVIDIA device plugin's config file: its MIG strategy and time-slicing or MPS sharing "
                      "for the nvidia.com labels (with --namespace nvidia.com)")
          ->option_text("FILE");
  sub->footer(
      "Exit status: 0 written (or ended by SIGTERM), 1 the file could not be written, 2 bad "
      "command line, 3 bad --machine or --device-plugin-config file.");
  ctx->add_common_flags(sub, kFlagMachine | kFlagCacheRoot | kFlagPython);
  return [ctx, f, output, config] {
    if (config->count() > 0 && f->ns != kNvidiaNamespace) {
      log_message(Severity::kError, "usage", "labels: --device-plugin-config goes only with --namespace nvidia.com");
      return int(kExitUsage);
    }
    ctx->common.cuda = true;  // what doctor senses: its verdict is a label
    ctx->common.health = true;
    ctx->common.torch_kernels = true;
    f->output_given = output->count() > 0;
    return f->once || f->json ? one_round(ctx, *f) : loop(ctx, *f);
  };
}

}  // namespace gpuenv
