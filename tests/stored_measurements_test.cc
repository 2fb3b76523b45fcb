// What `gpuenv bench` stored reaches the next command's Machine (rule
// measured): read beside NVML's queries for the machines this host has run,
// and looked up again once the fingerprint is known when the host's name
// changed (a new container's) since the bench ran.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <nlohmann/json.hpp>

#include "process.h"
#include "test_paths.h"

namespace gpuenv::testing {
namespace {

using nlohmann::json;

ProcessOptions h200(const std::string& cache) {
  ProcessOptions o = stand_ins("h200");
  o.env["GPUENV_BENCH_PLUGIN"] = test_paths::fake_dir() + "/libgpuenv-bench.so";
  o.env["GPUENV_CACHE_ROOT"] = cache;
  return o;
}

size_t measurements(const ProcessOptions& o) {
  ProcessResult r = run_gpuenv({"detect", "--json"}, o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out)["measurements"].size();
}

void set_hostnames(const std::string& db_path, const std::string& name) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  std::string sql = "UPDATE runs SET hostname = '" + name + "'";
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

TEST(StoredMeasurements, ReachTheNextCommandWhateverTheHostIsCalledNow) {
  std::string cache = make_temp_dir("gpuenv-stored");
  ProcessOptions o = h200(cache);
  EXPECT_EQ(measurements(o), 0u);
  ProcessResult bench = run_gpuenv({"bench"}, o);
  ASSERT_EQ(bench.exit_code, 0) << bench.err;
  size_t stored = measurements(o);
  ASSERT_GT(stored, 0u);
  set_hostnames(cache + "/gpuenv.db", "a-container-long-gone");
  EXPECT_EQ(measurements(o), stored);
  ProcessResult env = run_gpuenv({"explain", "--json"}, o);
  ASSERT_EQ(env.exit_code, 0) << env.err;
  EXPECT_NE(env.err.find("gpuenv bench memcpy_d2d"), std::string::npos) << env.err;  // rule measured cites it
}

// Another machine's figures on this host (a driver update makes one) are
// not this one's.
TEST(StoredMeasurements, AnotherMachineOnThisHostIsNotThisOne) {
  std::string cache = make_temp_dir("gpuenv-stored");
  ProcessOptions o = h200(cache);
  ProcessResult bench = run_gpuenv({"bench"}, o);
  ASSERT_EQ(bench.exit_code, 0) << bench.err;
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((cache + "/gpuenv.db").c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, "UPDATE runs SET fingerprint = 'fp-0000000000000000'", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  EXPECT_EQ(measurements(o), 0u);
}

}  // namespace
}  // namespace gpuenv::testing
