#include "flow/bench_session.h"

#include <algorithm>
#include <cstdio>

#include "act/render/bench/bench_report.h"
#include "act/render/printable.h"
#include "sys/env.h"
#include "sys/terminal.h"

namespace gpuenv::flow {
namespace {

// Progress is for a person at a terminal: not in JSON logs.
bool stderr_is_terminal() { return log_format() == LogFormat::kText && is_terminal(stderr); }

std::string no_device(std::size_t visible) {
  return visible == 0 ? "CUDA sees no GPU (check CUDA_VISIBLE_DEVICES and the driver)"
                      : "--device: no such CUDA device (" + std::to_string(visible) + " visible)";
}

}  // namespace

bench::Backend* PluginSession::open(std::string* err) {
  if (!load_bench_plugin(env_or("GPUENV_BENCH_PLUGIN", ""), &plugin_, err)) return nullptr;
  backend_ = std::make_unique<bench::PluginBackend>(plugin_.api);
  return backend_.get();
}

bench::Backend* open_devices(BenchSession& session, const std::optional<std::vector<int>>& only,
                             std::vector<bench::Device>* devices, std::string* err) {
  bench::Backend* backend = session.open(err);
  std::vector<bench::Device> all;
  if (!backend || !backend->devices(&all, err)) return nullptr;
  for (const auto& d : all)
    if (!only || std::count(only->begin(), only->end(), d.ordinal)) devices->push_back(d);
  if (devices->empty()) *err = no_device(all.size());
  return devices->empty() ? nullptr : backend;
}

void TerminalProgress::show(std::size_t index, std::size_t count, const bench::Planned& planned) {
  if (!stderr_is_terminal()) return;
  std::fprintf(stderr, "\r\033[K%s", printable(bench::progress_line(index, count, planned)).c_str());
  std::fflush(stderr);
}

void TerminalProgress::done() {
  if (stderr_is_terminal()) std::fputs("\r\033[K", stderr);
}

std::vector<bench::Result> run_planned(bench::Backend& backend, const bench::BenchContext& context,
                                       const std::vector<bench::Planned>& plan, ProgressSink* progress) {
  bench::Progress tell;
  if (progress) tell = [progress](std::size_t i, std::size_t n, const bench::Planned& p) { progress->show(i, n, p); };
  std::vector<bench::Result> results = bench::run_cases(backend, context, plan, tell);
  if (progress) progress->done();
  return results;
}

std::optional<std::int64_t> store_results(const StoreAt& store, const store::Run& run,
                                          const std::vector<bench::Result>& results, const MessageSink& log) {
  std::vector<Measurement> ms;
  for (const auto& r : results)
    if (auto m = bench::to_measurement(r, run.started_at)) ms.push_back(std::move(*m));
  std::string err;
  std::int64_t id = 0;
  auto db = store::Store::open(store.path, &err, store.patience);
  if (db && !db->note().empty()) log(Severity::kInfo, "store", "note: " + db->note(), {{"path", store.path}});
  if (db && db->add_run(run, ms, &id, &err)) return id;
  log(Severity::kWarning, "store", "results not stored: " + err, {{"path", store.path}});
  return std::nullopt;
}

}  // namespace gpuenv::flow
