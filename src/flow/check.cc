#include "flow/check.h"

#include "act/render/bench/check_report.h"
#include "act/render/report.h"
#include "bench/check.h"
#include "decide/decide.h"
#include "model/exit_codes.h"

namespace gpuenv::flow {
namespace {

constexpr std::chrono::milliseconds kWatchInterval{500};

int usage(const CheckEnv& env, const std::string& text) {
  env.log(Severity::kError, "usage", text, nlohmann::ordered_json::object());
  return kExitUsage;
}

bench::BenchOptions check_options(const CheckRequest& req) {
  bench::BenchOptions o;
  o.warmup = 1;
  o.trials = 3;
  o.min_trial_s = 0.005;
  o.algos = 4;
  o.copy_bytes = 256ull << 20;
  o.duration_s = req.duration_s;
  if (!req.devices.empty()) o.devices = req.devices;
  return o;
}

std::vector<std::string> uuids(const std::vector<bench::Device>& devices) {
  std::vector<std::string> out;
  for (const auto& d : devices) out.push_back(d.uuid);
  return out;
}

struct GpuChecks {
  std::vector<bench::Result> results;
  std::vector<WatchedGpu> watched;
};

// --long: starts the watch; a watch that cannot start is a warning.
bool start_watch(const CheckEnv& env, const std::vector<bench::Device>& devices,
                 std::vector<bench::CheckItem>* items) {
  Problem unwatched;
  if (env.watch->start(uuids(devices), kWatchInterval, &unwatched)) return true;
  items->push_back({"NVML watch", bench::CheckOutcome::kWarn, "clocks and ECC not watched: " + unwatched.message});
  return false;
}

// The GPU tests on this machine's GPUs, and their verdicts into *items; a
// backend that cannot open is a failed verdict.
void run_gpu_checks(const CheckRequest& req, const CheckEnv& env, const Machine& m, GpuChecks* out,
                    std::vector<bench::CheckItem>* items) {
  bench::BenchOptions o = check_options(req);
  std::vector<bench::Device> devices;
  std::string err;
  bench::Backend* backend = open_devices(*env.session, o.devices, &devices, &err);
  if (!backend) return items->push_back({"GPU checks", bench::CheckOutcome::kFail, err});
  bool watching = req.long_check && start_watch(env, devices, items);
  bench::BenchContext bctx{&m, devices, o};
  out->results = run_planned(*backend, bctx, bench::plan_cases(bench::check_cases(o, req.long_check), bctx),
                             req.json ? nullptr : env.progress);
  if (watching) out->watched = env.watch->stop();
  for (auto& i : bench::result_items(out->results)) items->push_back(std::move(i));
  for (auto& i : bench::watch_items(out->watched)) items->push_back(std::move(i));
}

void say_nothing_checked(const CheckRequest& req, const CheckEnv& env) {
  env.log(Severity::kError, "nothing checked",
          req.machine_file.empty()
              ? "check: nothing was checked: no GPU test ran and nothing was there to judge"
              : "check: nothing was checked: with --machine the GPU tests do not run (they measure this "
                "machine's GPUs), and the snapshot gave no problem, health finding or plan warning to judge",
          nlohmann::ordered_json::object());
}

}  // namespace

int run_check(const CheckRequest& req, const CheckEnv& env) {
  if (req.quick && req.long_check) return usage(env, "check: --quick or --long, not both");
  if (req.duration_s <= 0 || req.duration_s > 86400) return usage(env, "--duration: expected 1 to 86400 seconds");
  double t0 = env.clock();
  std::string started = env.utc_clock();
  Machine m;
  Options options;
  if (!env.sense(&m, &options)) return kExitBadInput;
  std::vector<bench::CheckItem> items = bench::machine_items(m, decide(m, options));
  GpuChecks gpu;
  if (req.machine_file.empty()) run_gpu_checks(req, env, m, &gpu, &items);
  if (items.empty()) say_nothing_checked(req, env);
  double seconds = env.clock() - t0;
  bool ok = bench::passed(items);
  if (!req.no_store && !gpu.results.empty()) {
    store::Run run = store::new_run(m, "check", started);
    run.passed = ok;
    store_results(env.store, run, gpu.results, env.log);
  }
  bench::CheckReport report{items, req.long_check, seconds, gpu.results, gpu.watched};
  env.print(format_report(report, format_of(req.json), env.style));
  return ok ? kExitOk : kExitFailure;
}

}  // namespace gpuenv::flow
