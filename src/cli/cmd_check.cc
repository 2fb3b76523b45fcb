// gpuenv check [--quick | --long]: a health check. Quick (seconds): what
// the plan warns about, plus a small GEMM and a copy with verified results.
// Long (minutes): also sustained GEMMs with every result checked and a
// memory pattern test, with clocks, throttle reasons and ECC watched. The
// sequence is flow/check.h's; this file parses the flags into its request
// and hands it the real environment: the plugin, NVML's watch, the
// terminal, the machine as sensed with its health.
#include "cli/commands.h"
#include "cli/context.h"
#include "flow/check.h"
#include "store/cache_root.h"

namespace gpuenv {
namespace {

struct CheckFlags {
  flow::CheckRequest request;
  std::string db;
};

int run_check(Context* ctx, const CheckFlags& f) {
  ctx->common.health = true;  // ECC, row remapping, clocks, fabric: decide/health.h judges them
  flow::PluginSession session;
  flow::NvmlGpuWatch watch(ctx->sense_options().nvml_library);
  flow::TerminalProgress progress;
  flow::CheckRequest request = f.request;
  request.machine_file = ctx->common.machine_file;
  flow::CheckEnv env;
  env.store.path = store::chosen_path(f.db, ctx->cache_root());
  env.sense = [ctx, path = env.store.path](Machine* m, Options* o) {
    if (!ctx->load_machine(m)) return false;
    ctx->read_measurements(path, m);
    *o = ctx->plan_options(*m);
    return true;
  };
  env.session = &session;
  env.watch = &watch;
  env.progress = &progress;
  env.style = ctx->style(stdout);
  return flow::run_check(request, env);
}

}  // namespace

std::function<int()> setup_check(CLI::App* sub, Context* ctx) {
  auto f = std::make_shared<CheckFlags>();
  flow::CheckRequest& r = f->request;
  sub->add_flag("--quick", r.quick, "Seconds: the plan's warnings, a small GEMM and a copy, verified (default)");
  sub->add_flag("--long", r.long_check,
                "Minutes: also sustained GEMMs and a memory pattern test, with clocks and ECC watched");
  sub->add_option("--duration", r.duration_s, "--long: seconds for each of the two long tests per GPU (default 60)");
  sub->add_option("--device", r.devices, "CUDA devices to check (default: all visible)")
      ->delimiter(',')
      ->option_text("N,...");
  sub->add_flag("--json", r.json, "Verdicts and figures as JSON");
  sub->add_flag("--no-store", r.no_store, "Do not keep the figures");
  sub->add_option("--db", f->db, "The measurement store (default: gpuenv.db under the cache root, as gpuenv bench)")->option_text("FILE");
  ctx->add_common_flags(sub, kSensingFlags | kFlagNoColor);
  return [ctx, f] { return run_check(ctx, *f); };
}

}  // namespace gpuenv
