// gpuenv bench: measure the GPUs (CUDA plugin), show each figure beside
// its spec peak, and keep it in the store; --history shows the stored ones.
// The sequence is flow/bench.h's; this file parses the flags into its
// request and hands it the real environment: the plugin, the terminal, the
// machine as sensed.
#include "cli/commands.h"
#include "cli/context.h"
#include "flow/bench.h"
#include "store/cache_root.h"

namespace gpuenv {
namespace {

struct BenchFlags {
  flow::BenchRequest request;
  std::string db;
};

int run_bench(Context* ctx, const BenchFlags& f) {
  flow::PluginSession session;
  flow::TerminalProgress progress;
  flow::BenchRequest request = f.request;
  request.machine_file = ctx->common.machine_file;
  flow::BenchEnv env;
  env.sense = [ctx](Machine* m) { return ctx->load_machine(m); };
  env.session = &session;
  env.store.path = store::chosen_path(f.db, ctx->cache_root());
  env.progress = &progress;
  env.style = ctx->style(stdout);
  return flow::run_bench(request, env);
}

}  // namespace

std::function<int()> setup_bench(CLI::App* sub, Context* ctx) {
  auto f = std::make_shared<BenchFlags>();
  flow::BenchRequest& r = f->request;
  sub->add_option("--sizes", r.sizes, "Square GEMM sizes (default 4096,8192)")->option_text("N,N...");
  sub->add_option("--only", r.only, "Run only these cases (keys or key prefixes: gemm_bf16, memcpy_d2d)")
      ->delimiter(',')
      ->option_text("KEY,...");
  sub->add_option("--device", r.devices, "CUDA devices to measure (default: all visible)")
      ->delimiter(',')
      ->option_text("N,...");
  sub->add_option("--trials", r.trials, "Timed trials per case; the median is reported (default 10)");
  sub->add_flag("--json", r.json, "Results as JSON, with every sample");
  CLI::Option* history = sub->add_flag("--history", r.history, "Show this machine's stored results over time");
  sub->add_flag("--no-store", r.no_store, "Do not keep the results");
  sub->add_option("--db", f->db,
                  "The measurement store (default: gpuenv.db under the cache root, --cache-root)")
      ->option_text("FILE");
  ctx->add_common_flags(sub, kFlagMachine | kFlagCacheRoot | kFlagNoColor);
  // bench measures this machine: a snapshot only names whose stored results --history shows.
  sub->get_option("--machine")
      ->needs(history)
      ->description("With --history: the stored results of the snapshot's machine (bench measures this one)");
  return [ctx, f] { return run_bench(ctx, *f); };
}

}  // namespace gpuenv
