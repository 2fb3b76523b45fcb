// Stand-ins for what the bench and check sequences (flow/bench.h,
// flow/check.h) are handed besides the backend: the session that opens a
// FakeBackend (or refuses, as a missing plugin does), and a progress sink
// that records what it was shown.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fake_bench_backend.h"
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

}  // namespace gpuenv::testing
