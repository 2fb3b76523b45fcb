// gpuenv check [--quick | --long]: a health check. Quick (seconds): what
// the plan warns about, plus a small GEMM and a copy with verified results.
// Long (minutes): also sustained GEMMs with every result checked and a
// memory pattern test, with clocks, throttle reasons and ECC watched.
#include <chrono>

#include "act/render/bench/check_report.h"
#include "cli/cmd_bench.h"
#include "cli/commands.h"
#include "sys/text.h"
#include "model/exit_codes.h"
#include "decide/decide.h"
#include "sense/nvml/nvml_watch.h"

namespace gpuenv {
namespace {

struct CheckFlags {
  bool quick = false, long_check = false, json = false, no_store = false;
  double duration_s = 60;
  std::vector<int> devices;
  std::string db;
};

bench::BenchOptions check_options(const CheckFlags& f) {
  bench::BenchOptions o;
  o.warmup = 1;
  o.trials = 3;
  o.min_trial_s = 0.005;
  o.algos = 4;
  o.copy_bytes = 256ull << 20;
  o.duration_s = f.duration_s;
  if (!f.devices.empty()) o.devices = f.devices;
  return o;
}

std::vector<std::string> watchable(const std::vector<bench::Device>& devices) {
  std::vector<std::string> out;
  for (const auto& d : devices) out.push_back(d.uuid);
  return out;
}

struct GpuChecks {
  std::vector<bench::Result> results;
  std::vector<WatchedGpu> watched;
};

void run_gpu_checks(Context* ctx, const Machine& m, const CheckFlags& f, GpuChecks* out,
                    std::vector<bench::CheckItem>* items) {
  bench::BenchOptions o = check_options(f);
  BenchSession s;
  std::string err;
  if (!s.open(o.devices, &err)) {
    items->push_back({"GPU checks", bench::CheckOutcome::kFail, err});
    return;
  }
  NvmlWatch watch;
  Problem unwatched;
  if (f.long_check &&
      !watch.start(ctx->sense_options().nvml_library, watchable(s.devices), std::chrono::milliseconds(500), &unwatched))
    items->push_back({"NVML watch", bench::CheckOutcome::kWarn, "clocks and ECC not watched: " + unwatched.message});
  bench::BenchContext bctx{&m, s.devices, o};
  std::vector<bench::Case> cases = bench::check_cases(o, f.long_check);
  out->results = bench::run_cases(*s.backend, bctx, bench::plan_cases(cases, bctx), terminal_progress(f.json));
  end_progress(f.json);
  out->watched = watch.stop();
  for (auto& i : bench::result_items(out->results)) items->push_back(std::move(i));
  for (auto& i : bench::watch_items(out->watched)) items->push_back(std::move(i));
}

int run_check(Context* ctx, const CheckFlags& f) {
  if (f.quick && f.long_check)
    return log_message(Severity::kError, "usage", "check: --quick or --long, not both"), kExitUsage;
  if (f.duration_s <= 0 || f.duration_s > 86400)
    return log_message(Severity::kError, "usage", "--duration: expected 1 to 86400 seconds"), kExitUsage;
  auto t0 = std::chrono::steady_clock::now();
  std::string started = utc_now();
  ctx->common.health = true;  // ECC, row remapping, clocks, fabric: decide/health.h judges them
  Machine m;
  if (!ctx->load_machine(&m)) return kExitBadInput;
  ctx->read_measurements(store::chosen_path(f.db, ctx->cache_root()), &m);
  Plan plan = decide(m, ctx->plan_options(m));
  std::vector<bench::CheckItem> items = bench::machine_items(m, plan);
  GpuChecks gpu;
  if (ctx->common.machine_file.empty()) run_gpu_checks(ctx, m, f, &gpu, &items);
  if (items.empty())
    log_message(Severity::kError, "nothing checked",
                ctx->common.machine_file.empty()
                    ? "check: nothing was checked: no GPU test ran and nothing was there to judge"
                    : "check: nothing was checked: with --machine the GPU tests do not run (they measure this "
                      "machine's GPUs), and the snapshot gave no problem, health finding or plan warning to judge");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  bool ok = bench::passed(items);
  if (!f.no_store && !gpu.results.empty()) {
    store::Run run = store::new_run(m, "check", started);
    run.passed = ok;
    store_results(store::chosen_path(f.db, ctx->cache_root()), run, gpu.results);
  }
  std::string out = f.json ? bench::check_json(items, f.long_check, seconds, gpu.results, gpu.watched)
                           : bench::render_check(items, f.long_check, seconds, ctx->style(stdout));
  std::fputs(out.c_str(), stdout);
  return ok ? kExitOk : kExitFailure;
}

}  // namespace

std::function<int()> setup_check(CLI::App* sub, Context* ctx) {
  auto f = std::make_shared<CheckFlags>();
  sub->add_flag("--quick", f->quick, "Seconds: the plan's warnings, a small GEMM and a copy, verified (default)");
  sub->add_flag("--long", f->long_check,
                "Minutes: also sustained GEMMs and a memory pattern test, with clocks and ECC watched");
  sub->add_option("--duration", f->duration_s, "--long: seconds for each of the two long tests per GPU (default 60)");
  sub->add_option("--device", f->devices, "CUDA devices to check (default: all visible)")
      ->delimiter(',')
      ->option_text("N,...");
  sub->add_flag("--json", f->json, "Verdicts and figures as JSON");
  sub->add_flag("--no-store", f->no_store, "Do not keep the figures");
  sub->add_option("--db", f->db, "The measurement store (default: gpuenv.db under the cache root, as gpuenv bench)")->option_text("FILE");
  ctx->add_common_flags(sub, kSensingFlags | kFlagNoColor);
  return [ctx, f] { return run_check(ctx, *f); };
}

}  // namespace gpuenv
