// labels: Node Feature Discovery's local-source feature file. Each round
// senses what doctor senses, judges with doctor's checks, and replaces the
// file atomically; without --once it repeats every --interval seconds until
// SIGTERM or SIGINT, which end it with status 0 (docs/cluster.md).
#include <signal.h>
#include <sys/stat.h>

#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>

#include "cli/cmd_bench.h"
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

struct LabelFlags {
  std::string output = features_dir() + "/gpuenv";
  bool once = false, json = false, output_given = false;
  int interval_s = 60;
};

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
std::string labels_json(const NodeLabels& labels, const std::string& expiry) {
  nlohmann::ordered_json j = {{"expiry", expiry}, {"labels", nlohmann::ordered_json::object()}};
  for (const auto& [name, value] : labels) j["labels"][kLabelPrefix + name] = value;
  return json_document(j);
}

// The file's content, or false (with *err) when the machine cannot be read
// or the file would pass NFD's size limit. Labels expire after three rounds:
// one missed round keeps them, a dead writer does not.
bool render_round(Context* ctx, const LabelFlags& f, std::string* out, int* code) {
  ctx->store_patience = {};  // each round waits for a locked store afresh, and says so again
  Machine m;
  if (!ctx->load_machine(&m)) {
    *code = kExitBadInput;
    return false;
  }
  std::string verdict = status_name(worst(diagnose(m, ctx->plan_options(m))));
  std::vector<std::string> dropped;
  NodeLabels labels = node_labels(m, verdict, &dropped);
  for (const auto& why : dropped)
    log_message(Severity::kWarning, "label dropped", "labels: left out " + why, {{"label", why}});
  std::string expiry = utc_time(std::time(nullptr) + 3 * f.interval_s);
  if (f.json) return *out = labels_json(labels, expiry), true;
  *out = feature_file(labels, expiry);
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

int one_round(Context* ctx, const LabelFlags& f) {
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
int loop(Context* ctx, const LabelFlags& f) {
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
  sub->footer(
      "Exit status: 0 written (or ended by SIGTERM), 1 the file could not be written, 2 bad "
      "command line, 3 bad --machine file.");
  ctx->add_common_flags(sub, kFlagMachine | kFlagCacheRoot | kFlagPython);
  return [ctx, f, output] {
    ctx->common.cuda = true;  // what doctor senses: its verdict is a label
    ctx->common.health = true;
    ctx->common.torch_kernels = true;
    f->output_given = output->count() > 0;
    return f->once || f->json ? one_round(ctx, *f) : loop(ctx, *f);
  };
}

}  // namespace gpuenv
