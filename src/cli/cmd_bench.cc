// gpuenv bench: measure the GPUs (CUDA plugin), show each figure beside
// its spec peak, and keep it in the store; --history shows the stored ones.
#include "cli/cmd_bench.h"
#include "cli/commands.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>

#include "act/render/bench/bench_report.h"
#include "model/exit_codes.h"
#include "sys/text.h"
#include "store/fingerprint.h"

namespace gpuenv {
namespace {

struct BenchFlags {
  std::string sizes = "4096,8192";
  std::vector<std::string> only;
  std::vector<int> devices;
  int trials = 10;
  bool json = false, history = false, no_store = false;
  std::string db;
};

// Progress is for a person at a terminal: not with --json, nor in JSON logs.
bool stderr_is_terminal(bool quiet) {
  return !quiet && log_format() == LogFormat::kText && isatty(STDERR_FILENO);
}

int show_history(Context* ctx, const BenchFlags& f) {
  Machine m;
  if (!ctx->load_machine(&m)) return kExitBadInput;
  std::string path = store::chosen_path(f.db, ctx->cache_root()), err, fp = store::fingerprint(m);
  std::vector<store::HistoryRow> rows;
  auto db = store::Store::open_existing(path, &err);
  std::vector<std::string> skipped;
  if (db && !db->history(fp, &rows, &err, &skipped)) db.reset();
  for (const auto& why : skipped) log_message(Severity::kWarning, "store", why + ": left out", {{"path", path}});
  if (!err.empty()) {
    log_message(Severity::kError, "store", err, {{"path", path}});
    return kExitFailure;
  }
  std::string machine = store::describe_machine(m);
  std::fputs((f.json ? bench::history_json(machine, fp, rows) : bench::render_history(machine, rows)).c_str(), stdout);
  return kExitOk;
}

bool bench_options(const BenchFlags& f, bench::BenchOptions* o) {
  std::string err;
  if (!bench::parse_sizes(f.sizes, &o->sizes, &err)) return log_message(Severity::kError, "usage", err), false;
  if (f.trials < 1 || f.trials > GPUENV_BENCH_MAX_SAMPLES)
    return log_message(Severity::kError, "usage", "--trials: expected 1 to " + std::to_string(GPUENV_BENCH_MAX_SAMPLES)),
           false;
  o->trials = f.trials;
  o->only = f.only;
  if (!f.devices.empty()) o->devices = f.devices;
  return true;
}

bool any_failed(const std::vector<bench::Result>& results) {
  for (const auto& r : results)
    if (r.failed()) return true;
  return false;
}

int run_bench(Context* ctx, const BenchFlags& f) {
  if (!ctx->common.machine_file.empty()) {
    log_message(Severity::kError, "usage", "bench measures this machine; --machine goes only with --history");
    return kExitUsage;
  }
  bench::BenchOptions o;
  if (!bench_options(f, &o)) return kExitUsage;
  Machine m;
  ctx->load_machine(&m);
  BenchSession s;
  std::string err;
  if (!s.open(o.devices, &err)) return log_message(Severity::kError, "plugin", err), kExitFailure;
  bench::BenchContext bctx{&m, s.devices, o};
  std::vector<bench::Case> cases = bench::bench_cases(o);
  bench::RunInfo info{store::describe_machine(m), store::fingerprint(m), utc_now(), 0, {}, {}, s.devices};
  auto t0 = std::chrono::steady_clock::now();
  auto results = bench::run_cases(*s.backend, bctx, bench::plan_cases(cases, bctx), terminal_progress(f.json));
  end_progress(f.json);
  info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!f.no_store) {
    info.store_path = store::chosen_path(f.db, ctx->cache_root());
    info.run_id = store_results(*info.store_path, store::new_run(m, "bench", info.started_at), results);
    if (!info.run_id) info.store_path.reset();
  }
  std::string out =
      f.json ? bench::results_json(info, results) : bench::render_results(info, results, ctx->style(stdout));
  std::fputs(out.c_str(), stdout);
  return any_failed(results) ? kExitFailure : kExitOk;
}

}  // namespace

bool BenchSession::open(const std::optional<std::vector<int>>& only, std::string* err) {
  const char* env = std::getenv("GPUENV_BENCH_PLUGIN");
  if (!load_bench_plugin(env ? env : "", &plugin, err)) return false;
  backend = std::make_unique<bench::PluginBackend>(plugin.api);
  std::vector<bench::Device> all;
  if (!backend->devices(&all, err)) return false;
  for (const auto& d : all)
    if (!only || std::count(only->begin(), only->end(), d.ordinal)) devices.push_back(d);
  if (devices.empty())
    *err = all.empty() ? "CUDA sees no GPU (check CUDA_VISIBLE_DEVICES and the driver)"
                       : "--device: no such CUDA device (" + std::to_string(all.size()) + " visible)";
  return !devices.empty();
}

std::optional<std::int64_t> store_results(const std::string& path, const store::Run& run,
                                          const std::vector<bench::Result>& results) {
  std::vector<Measurement> ms;
  for (const auto& r : results)
    if (auto m = bench::to_measurement(r, run.started_at)) ms.push_back(std::move(*m));
  std::string err;
  std::int64_t id = 0;
  auto db = store::Store::open(path, &err);
  if (db && !db->note().empty()) log_message(Severity::kInfo, "store", "note: " + db->note(), {{"path", path}});
  if (db && db->add_run(run, ms, &id, &err)) return id;
  log_message(Severity::kWarning, "store", "results not stored: " + err, {{"path", path}});
  return std::nullopt;
}

bench::Progress terminal_progress(bool quiet) {
  if (!stderr_is_terminal(quiet)) return nullptr;
  return [](size_t i, size_t n, const bench::Planned& p) {
    std::fprintf(stderr, "\r\033[K%s", printable(bench::progress_line(i, n, p)).c_str());
    std::fflush(stderr);
  };
}

void end_progress(bool quiet) {
  if (stderr_is_terminal(quiet)) std::fputs("\r\033[K", stderr);
}

std::function<int()> setup_bench(CLI::App* sub, Context* ctx) {
  auto f = std::make_shared<BenchFlags>();
  sub->add_option("--sizes", f->sizes, "Square GEMM sizes (default 4096,8192)")->option_text("N,N...");
  sub->add_option("--only", f->only, "Run only these cases (keys or key prefixes: gemm_bf16, memcpy_d2d)")
      ->delimiter(',')
      ->option_text("KEY,...");
  sub->add_option("--device", f->devices, "CUDA devices to measure (default: all visible)")
      ->delimiter(',')
      ->option_text("N,...");
  sub->add_option("--trials", f->trials, "Timed trials per case; the median is reported (default 10)");
  sub->add_flag("--json", f->json, "Results as JSON, with every sample");
  CLI::Option* history = sub->add_flag("--history", f->history, "Show this machine's stored results over time");
  sub->add_flag("--no-store", f->no_store, "Do not keep the results");
  sub->add_option("--db", f->db,
                  "The measurement store (default: gpuenv.db under the cache root, --cache-root)")
      ->option_text("FILE");
  ctx->add_common_flags(sub, kFlagMachine | kFlagCacheRoot | kFlagNoColor);
  // bench measures this machine: a snapshot only names whose stored results --history shows.
  sub->get_option("--machine")
      ->needs(history)
      ->description("With --history: the stored results of the snapshot's machine (bench measures this one)");
  return [ctx, f] { return f->history ? show_history(ctx, *f) : run_bench(ctx, *f); };
}

}  // namespace gpuenv
