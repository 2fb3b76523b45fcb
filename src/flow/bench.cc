#include "flow/bench.h"

#include "act/render/bench/bench_report.h"
#include "act/render/report.h"
#include "model/exit_codes.h"
#include "store/fingerprint.h"

namespace gpuenv::flow {
namespace {

int usage(const BenchEnv& env, const std::string& text) {
  env.log(Severity::kError, "usage", text, nlohmann::ordered_json::object());
  return kExitUsage;
}

// --history: this machine's (or the snapshot's) stored figures over time.
int show_history(const BenchRequest& req, const BenchEnv& env) {
  Machine m;
  if (!env.sense(&m)) return kExitBadInput;
  const std::string& path = env.store.path;
  std::string err, fp = store::fingerprint(m);
  std::vector<store::HistoryRow> rows;
  std::vector<std::string> skipped;
  auto db = store::Store::open_existing(path, &err, env.store.patience);
  if (db && !db->history(fp, &rows, &err, &skipped)) db.reset();
  for (const auto& why : skipped) env.log(Severity::kWarning, "store", why + ": left out", {{"path", path}});
  if (!err.empty()) {
    env.log(Severity::kError, "store", err, {{"path", path}});
    return kExitFailure;
  }
  std::string machine = store::describe_machine(m);
  env.print(format_report(bench::HistoryReport{machine, fp, rows}, format_of(req.json), env.style));
  return kExitOk;
}

// The flags as the engine's options; false (said) on a bad one.
bool bench_options(const BenchRequest& req, const BenchEnv& env, bench::BenchOptions* o) {
  std::string err;
  if (!bench::parse_sizes(req.sizes, &o->sizes, &err)) return usage(env, err), false;
  if (req.trials < 1 || req.trials > GPUENV_BENCH_MAX_SAMPLES)
    return usage(env, "--trials: expected 1 to " + std::to_string(GPUENV_BENCH_MAX_SAMPLES)), false;
  o->trials = req.trials;
  o->only = req.only;
  if (!req.devices.empty()) o->devices = req.devices;
  return true;
}

bool any_failed(const std::vector<bench::Result>& results) {
  for (const auto& r : results)
    if (r.failed()) return true;
  return false;
}

// Keeps the results unless --no-store; says where in `info`.
void keep(const BenchRequest& req, const BenchEnv& env, const Machine& m, const std::vector<bench::Result>& results,
          bench::RunInfo* info) {
  if (req.no_store) return;
  info->store_path = env.store.path;
  info->run_id = store_results(env.store, store::new_run(m, "bench", info->started_at), results, env.log);
  if (!info->run_id) info->store_path.reset();
}

int measure(const BenchRequest& req, const BenchEnv& env) {
  if (!req.machine_file.empty()) return usage(env, "bench measures this machine; --machine goes only with --history");
  bench::BenchOptions o;
  if (!bench_options(req, env, &o)) return kExitUsage;
  Machine m;
  env.sense(&m);  // what it gives is enough: the backend's devices are what is measured
  std::vector<bench::Device> devices;
  std::string err;
  bench::Backend* backend = open_devices(*env.session, o.devices, &devices, &err);
  if (!backend) return env.log(Severity::kError, "plugin", err, nlohmann::ordered_json::object()), kExitFailure;
  bench::BenchContext bctx{&m, devices, o};
  bench::RunInfo info{store::describe_machine(m), store::fingerprint(m), env.utc_clock(), 0, {}, {}, devices};
  double t0 = env.clock();
  auto results = run_planned(*backend, bctx, bench::plan_cases(bench::bench_cases(o), bctx),
                             req.json ? nullptr : env.progress);
  info.seconds = env.clock() - t0;
  keep(req, env, m, results, &info);
  env.print(format_report(bench::ResultsReport{info, results}, format_of(req.json), env.style));
  return any_failed(results) ? kExitFailure : kExitOk;
}

}  // namespace

int run_bench(const BenchRequest& request, const BenchEnv& env) {
  return request.history ? show_history(request, env) : measure(request, env);
}

}  // namespace gpuenv::flow
