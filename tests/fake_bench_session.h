// Stand-ins for what the bench and check sequences (flow/bench.h,
// flow/check.h) are handed besides the backend: the session that opens a
// FakeBackend (or refuses, as a missing plugin does), and a progress sink
// that records what it was shown.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "builders.h"
#include "fake_bench_backend.h"
#include "process.h"
#include "said.h"
#include "flow/bench_session.h"
#include "store/fingerprint.h"
#include "store/store.h"

namespace gpuenv::testing {

/// The figures the store at `path` keeps for machine `m`, read back as
/// `bench --history` reads them; a store error fails the test.
inline std::vector<store::HistoryRow> stored_history(const std::string& path, const Machine& m) {
  std::string err;
  std::vector<store::HistoryRow> rows;
  auto db = store::Store::open_existing(path, &err);
  if (db) db->history(store::fingerprint(m), &rows, &err);
  EXPECT_EQ(err, "");
  return rows;
}

/// Opens `backend`, or refuses with `refusal`.
class FakeSession : public flow::BenchSession {
 public:
  FakeBackend backend;
  std::string refusal;
  int opened = 0;
  bench::Backend* open(std::string* err) override {
    ++opened;
    if (!refusal.empty()) return *err = refusal, nullptr;
    return &backend;
  }
};

/// The cases it was shown ("INDEX/COUNT KEY"), and how often it was done.
class RecordedProgress : public flow::ProgressSink {
 public:
  std::vector<std::string> shown;
  int done_calls = 0;
  void show(std::size_t index, std::size_t count, const bench::Planned& planned) override {
    shown.push_back(std::to_string(index) + "/" + std::to_string(count) + " " + planned.c.key);
  }
  void done() override { ++done_calls; }
};

/// What the bench and check sequence tests share: one H200, its CUDA device
/// the plugin's; the clocks start at 10 s and step 2.5 s a call, at
/// 2026-01-02T03:04:05Z; a store in a fresh directory named by `prefix`;
/// stdout and the log kept in strings.
struct SessionFakes {
  Machine m = machine::h200();
  FakeSession session;
  RecordedProgress progress;
  Said said;
  std::string out;
  double now = 10;
  bool sensed = true;
  std::string store_path;
  explicit SessionFakes(const std::string& prefix) : store_path(make_temp_dir(prefix) + "/gpuenv.db") {
    session.backend.gpus = devices_of(m);
  }
  /// Fills what both sequences are handed with the fakes above.
  void fill(flow::SessionEnv* e) {
    e->session = &session;
    e->store.path = store_path;
    e->utc_clock = [] { return std::string("2026-01-02T03:04:05Z"); };
    e->clock = [this] { return (now += 2.5) - 2.5; };
    e->progress = &progress;
    e->print = [this](const std::string& s) { out += s; };
    e->log = said.sink();
  }
  std::vector<store::HistoryRow> stored() { return stored_history(store_path, m); }
};

}  // namespace gpuenv::testing
