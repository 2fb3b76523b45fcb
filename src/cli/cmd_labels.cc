// labels: Node Feature Discovery's local-source feature file
// (docs/cluster.md). The sequence is flow/labels.h's; this file parses the
// flags into its request and hands it the real environment: the machine as
// doctor senses it, the atomic writer, SIGTERM and SIGINT.
#include "cli/commands.h"
#include "cli/context.h"
#include "flow/labels.h"
#include "model/exit_codes.h"

namespace gpuenv {
namespace {

int run_labels(Context* ctx, const flow::LabelsRequest& request) {
  flow::SignalStop stop;
  flow::LabelsEnv env;
  env.stop = &stop;
  env.sense = [ctx](Machine* m, Options* o) {
    ctx->store_patience = {};  // each round waits for a locked store afresh, and says so again
    if (!ctx->load_machine(m)) return false;
    *o = ctx->plan_options(*m);
    return true;
  };
  return flow::run_labels(request, env);
}

}  // namespace

std::function<int()> setup_labels(CLI::App* sub, Context* ctx) {
  auto f = std::make_shared<flow::LabelsRequest>();
  f->features_dir = flow::features_dir();
  f->output = f->features_dir + "/gpuenv";
  CLI::Option* output =
      sub->add_option("--output", f->output,
                      std::string("The feature file; - for stdout (default ") + flow::kDefaultFeaturesDir +
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
      ->check(CLI::IsMember({"gpuenv.dev", flow::kNvidiaNamespace}))
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
    if (config->count() > 0 && f->ns != flow::kNvidiaNamespace) {
      log_message(Severity::kError, "usage", "labels: --device-plugin-config goes only with --namespace nvidia.com");
      return int(kExitUsage);
    }
    ctx->common.cuda = true;  // what doctor senses: its verdict is a label
    ctx->common.health = true;
    ctx->common.torch_kernels = true;
    f->output_given = output->count() > 0;
    return run_labels(ctx, *f);
  };
}

}  // namespace gpuenv
