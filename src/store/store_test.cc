#include "store/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>

#include "builders.h"
#include "forked.h"
#include "store/fingerprint.h"

namespace gpuenv::store {
namespace {

namespace fs = std::filesystem;
using namespace gpuenv::testing;

std::string store_temp_dir() {
  std::string tmpl = (fs::temp_directory_path() / "gpuenv-store-XXXXXX").string();
  return mkdtemp(tmpl.data());
}

Measurement meas(const std::string& key, double value, const std::string& gpu = "GPU-a",
                 std::optional<std::string> peer = std::nullopt) {
  Measurement m;
  m.key = key, m.gpu_uuid = gpu, m.peer_uuid = peer, m.value = value, m.unit = "GB/s", m.peak = 100;
  m.detail = "d", m.measured_at = "2025-01-01T00:00:00Z", m.gpuenv_version = "0.1.0";
  return m;
}

Run run(const std::string& fp = "fp-1", const std::string& at = "2025-01-01T00:00:00Z") {
  return {fp, "1x NVIDIA H200", "bench", at, "0.1.0", "host", std::nullopt};
}

TEST(Store, ANewRunNamesThisMachineAndVersion) {
  Machine m = machine::h200(2);
  m.host.hostname = "node-7";
  store::Run r = new_run(m, "check", "2025-01-01T00:00:00Z");
  EXPECT_EQ(r.fingerprint, fingerprint(m));
  EXPECT_EQ(r.machine, describe_machine(m));
  EXPECT_EQ(r.command, "check");
  EXPECT_EQ(r.started_at, "2025-01-01T00:00:00Z");
  EXPECT_EQ(r.gpuenv_version, GPUENV_VERSION);
  EXPECT_EQ(r.hostname, "node-7");
  EXPECT_EQ(r.passed, std::nullopt);
  m.host.hostname.reset();
  EXPECT_EQ(new_run(m, "bench", "t").hostname, "");
}

TEST(Store, CreatesItsDirectoryAndKeepsRuns) {
  std::string dir = store_temp_dir() + "/a/b";
  std::string err;
  auto db = Store::open(dir + "/gpuenv.db", &err);
  ASSERT_TRUE(db) << err;
  std::int64_t id1 = 0, id2 = 0;
  ASSERT_TRUE(db->add_run(run(), {meas("copy", 10), meas("p2p", 5, "GPU-a", "GPU-b")}, &id1, &err)) << err;
  ASSERT_TRUE(db->add_run(run("fp-1", "2025-01-02T00:00:00Z"), {meas("copy", 12)}, &id2, &err)) << err;
  ASSERT_TRUE(db->add_run(run("fp-other"), {meas("copy", 99)}, &id2, &err)) << err;
  auto elsewhere = run("fp-far");
  elsewhere.hostname = "another-host";
  ASSERT_TRUE(db->add_run(elsewhere, {meas("copy", 7)}, &id2, &err)) << err;
  EXPECT_GT(id2, id1);

  MachineMeasurements mine;
  ASSERT_TRUE(db->latest("fp-1", &mine, &err)) << err;
  const std::vector<Measurement>& latest = mine.latest;
  ASSERT_EQ(latest.size(), 2u);
  EXPECT_EQ(latest[0].key, "copy");
  EXPECT_EQ(*latest[0].value, 12);  // the newer one
  EXPECT_EQ(latest[1].key, "p2p");
  EXPECT_EQ(latest[1].peer_uuid, "GPU-b");
  EXPECT_EQ(latest[1], meas("p2p", 5, "GPU-a", "GPU-b"));  // every field round-trips

  // What a command reads while it senses: each machine of this host, by
  // fingerprint, the same as latest() of each; another host's left out.
  std::map<std::string, MachineMeasurements> machines;
  ASSERT_TRUE(db->latest_on_host("host", &machines, &err)) << err;
  ASSERT_EQ(machines.size(), 2u);
  EXPECT_EQ(machines["fp-1"].latest, latest);
  ASSERT_EQ(machines["fp-other"].latest.size(), 1u);
  EXPECT_EQ(*machines["fp-other"].latest[0].value, 99);
  MachineMeasurements far;
  ASSERT_TRUE(db->latest("fp-far", &far, &err)) << err;
  ASSERT_EQ(far.latest.size(), 1u);
  EXPECT_EQ(*far.latest[0].value, 7);
  MachineMeasurements none;
  ASSERT_TRUE(db->latest("fp-never", &none, &err)) << err;
  EXPECT_TRUE(none.latest.empty());
  bool other_host = false;
  ASSERT_TRUE(db->ran_elsewhere("host", &other_host, &err)) << err;
  EXPECT_TRUE(other_host);  // another-host's run
  auto alone = Store::open(store_temp_dir() + "/alone.db", &err);
  ASSERT_TRUE(alone->add_run(run(), {meas("copy", 1)}, &id1, &err)) << err;
  ASSERT_TRUE(alone->ran_elsewhere("host", &other_host, &err)) << err;
  EXPECT_FALSE(other_host);
  ASSERT_TRUE(alone->ran_elsewhere("renamed", &other_host, &err)) << err;
  EXPECT_TRUE(other_host);

  std::vector<HistoryRow> rows;
  ASSERT_TRUE(db->history("fp-1", &rows, &err)) << err;
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(*rows[0].m.value, 10);
  EXPECT_EQ(*rows[2].m.value, 12);
  EXPECT_EQ(rows[2].command, "bench");
  EXPECT_EQ(rows[0].run_id, id1);
}

// issue 35, 6: a figure gpuenv never writes (negative, infinite, a zero peak,
// an unknown status), put in with SQL, is left out and named; the rest reads.
TEST(Store, HostileMeasurementsAreLeftOutWithTheirReason) {
  struct Row {
    std::string set, reason;
  } rows[] = {
      {"value = -1", "value is negative or not finite"},
      {"value = 1e999", "value is negative or not finite"},
      {"peak = 0", "peak is not a positive finite number"},
      {"peak = -1e999", "peak is not a positive finite number"},
      {"status = 'ok\x1b'", "status is neither ok nor failed"},
  };
  for (const auto& r : rows) {
    std::string path = store_temp_dir() + "/gpuenv.db", err;
    std::int64_t id = 0;
    {
      auto db = Store::open(path, &err);
      ASSERT_TRUE(db->add_run(run(), {meas("copy", 10), meas("p2p", 5)}, &id, &err)) << err;
    }
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
    std::string sql = "UPDATE measurements SET " + r.set + " WHERE key = 'copy'";
    EXPECT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(raw);
    sqlite3_close(raw);
    auto db = Store::open(path, &err);
    MachineMeasurements mine;
    ASSERT_TRUE(db->latest("fp-1", &mine, &err)) << err;
    std::map<std::string, MachineMeasurements> machines;
    ASSERT_TRUE(db->latest_on_host("host", &machines, &err)) << err;
    EXPECT_EQ(machines["fp-1"].skipped, mine.skipped);
    ASSERT_EQ(mine.latest.size(), 1u) << r.set;
    EXPECT_EQ(mine.latest[0].key, "p2p");
    ASSERT_EQ(mine.skipped.size(), 1u) << r.set;
    EXPECT_EQ(mine.skipped[0], path + ": measurement copy of run " + std::to_string(id) + ": " + r.reason);
    std::vector<HistoryRow> rows;
    std::vector<std::string> skipped;
    ASSERT_TRUE(db->history("fp-1", &rows, &err, &skipped)) << err;
    EXPECT_EQ(rows.size(), 1u);
    EXPECT_EQ(skipped.size(), 1u);
  }
}

TEST(Store, NullsStayNull) {
  std::string err;
  auto db = Store::open(store_temp_dir() + "/gpuenv.db", &err);
  ASSERT_TRUE(db) << err;
  Measurement m = meas("gemm", 1);
  m.value.reset(), m.peak.reset(), m.status = "failed";
  std::int64_t id = 0;
  ASSERT_TRUE(db->add_run(run(), {m}, &id, &err)) << err;
  MachineMeasurements mine;
  ASSERT_TRUE(db->latest("fp-1", &mine, &err));
  ASSERT_EQ(mine.latest.size(), 1u);
  EXPECT_EQ(mine.latest[0], m);
}

TEST(Store, OpenExistingNeverCreates) {
  std::string dir = store_temp_dir(), err;
  EXPECT_FALSE(Store::open_existing(dir + "/none.db", &err));
  EXPECT_TRUE(err.empty()) << err;
  EXPECT_FALSE(fs::exists(dir + "/none.db"));
  EXPECT_FALSE(Store::open_existing("", &err));
  ASSERT_TRUE(Store::open(dir + "/g.db", &err));
  EXPECT_TRUE(Store::open_existing(dir + "/g.db", &err));
}

TEST(Store, ErrorsNameTheFile) {
  std::string dir = store_temp_dir(), err;
  fs::create_directories(dir + "/db-is-a-dir.db");
  EXPECT_FALSE(Store::open(dir + "/db-is-a-dir.db", &err));
  EXPECT_NE(err.find("db-is-a-dir.db"), std::string::npos) << err;
  std::string garbage = dir + "/garbage.db";
  FILE* f = std::fopen(garbage.c_str(), "w");
  std::fputs("this is not a database, not at all, and long enough to be read as a header", f);
  std::fclose(f);
  err.clear();
  EXPECT_FALSE(Store::open(garbage, &err));
  EXPECT_NE(err.find("garbage.db"), std::string::npos) << err;
  EXPECT_FALSE(Store::open("", &err));
  EXPECT_NE(err.find("GPUENV_CACHE_ROOT"), std::string::npos) << err;
}

int store_user_version(const std::string& path, int set = -1) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  if (set >= 0) sqlite3_exec(db, ("PRAGMA user_version=" + std::to_string(set)).c_str(), nullptr, nullptr, nullptr);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, nullptr);
  int v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int(s, 0) : -1;
  sqlite3_finalize(s);
  sqlite3_close(db);
  return v;
}

// A newer gpuenv's store is left as it is: no rows, no version reset.
TEST(Store, ANewerSchemaIsNotDowngraded) {
  std::string path = store_temp_dir() + "/gpuenv.db", err;
  std::int64_t id = 0, n = 0;
  {
    auto db = Store::open(path, &err);
    ASSERT_TRUE(db) << err;
    ASSERT_TRUE(db->add_run(run(), {meas("copy", 1)}, &id, &err)) << err;
  }
  ASSERT_EQ(store_user_version(path, 99), 99);
  EXPECT_FALSE(Store::open(path, &err));
  EXPECT_NE(err.find("schema is version 99, newer than this gpuenv's (5); upgrade gpuenv"), std::string::npos)
      << err;
  EXPECT_EQ(store_user_version(path), 99);
  auto reader = Store::open_existing(path, &err);  // reading what it can is fine
  ASSERT_TRUE(reader) << err;
  ASSERT_TRUE(reader->count(&n, &err)) << err;
  EXPECT_EQ(n, 1);
}

// 8 ranks of a job write at once: WAL and the busy timeout lose nothing.
TEST(StoreConcurrency, EightProcessesLoseNothing) {
  constexpr int kProcesses = 8, kInserts = 40;
  std::string path = store_temp_dir() + "/gpuenv.db";
  std::vector<int> codes = testing::run_forked(kProcesses, [&](int p) {
    std::string err;
    auto db = Store::open(path, &err);  // every child creates and migrates at once too
    bool ok = db != nullptr;
    for (int i = 0; ok && i < kInserts; ++i) {
      std::int64_t id = 0;
      ok = db->add_run(run("fp-" + std::to_string(p)), {meas("copy", i)}, &id, &err);
    }
    if (!ok) std::fprintf(stderr, "rank %d: %s\n", p, err.c_str());
    return ok;
  });
  EXPECT_EQ(codes, std::vector<int>(kProcesses, 0));
  std::string err;
  auto db = Store::open(path, &err);
  ASSERT_TRUE(db) << err;
  std::int64_t n = 0;
  ASSERT_TRUE(db->count(&n, &err)) << err;
  EXPECT_EQ(n, kProcesses * kInserts);
  std::vector<HistoryRow> rows;
  ASSERT_TRUE(db->history("fp-3", &rows, &err));
  EXPECT_EQ(rows.size(), static_cast<size_t>(kInserts));
}

TEST(StoreFingerprint, StableAndSensitiveToWhatMatters) {
  Machine a = machine::h100(2).with_nvlink();
  EXPECT_EQ(fingerprint(a), fingerprint(a));
  EXPECT_EQ(fingerprint(a).size(), 3u + 16);
  EXPECT_EQ(fingerprint(a).rfind("fp-", 0), 0u);
  Machine reordered = a;
  std::swap(reordered.gpus[0], reordered.gpus[1]);
  EXPECT_EQ(fingerprint(reordered), fingerprint(a));  // UUIDs, not order
  Machine hostname = a;
  hostname.host.hostname = "elsewhere";
  EXPECT_EQ(fingerprint(hostname), fingerprint(a));
  Machine driver = a;
  driver.nvidia.driver_version = "999.1";
  EXPECT_NE(fingerprint(driver), fingerprint(a));
  Machine cuda = a;
  cuda.nvidia.cuda_driver_version = 12080;
  EXPECT_NE(fingerprint(cuda), fingerprint(a));
  Machine swapped = a;
  swapped.gpus[1].uuid = "GPU-ffffffff-0000-0000-0000-000000000000";
  EXPECT_NE(fingerprint(swapped), fingerprint(a));
  EXPECT_EQ(describe_machine(machine::h200()),
            "1x NVIDIA H200, driver " + *machine::h200().build().nvidia.driver_version + ", CUDA 13.0");
  EXPECT_EQ(describe_machine(machine::none()).rfind("no GPU", 0), 0u);
}

}  // namespace
}  // namespace gpuenv::store

namespace gpuenv::store {
namespace {

std::string journal_mode(const std::string& path) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &s, nullptr);
  std::string mode = sqlite3_step(s) == SQLITE_ROW ? reinterpret_cast<const char*>(sqlite3_column_text(s, 0)) : "";
  sqlite3_finalize(s);
  sqlite3_close(db);
  return mode;
}

// On NFS (faked: GPUENV_STORE_FS_TYPE stands in for statfs) the store uses a
// rollback journal and says so; on a local disk, WAL and nothing to say.
TEST(Store, OnANetworkFilesystemItUsesARollbackJournal) {
  std::string dir = store_temp_dir(), err;
  setenv("GPUENV_STORE_FS_TYPE", "0x6969", 1);
  auto nfs = Store::open(dir + "/nfs.db", &err);
  unsetenv("GPUENV_STORE_FS_TYPE");
  ASSERT_TRUE(nfs) << err;
  std::int64_t id = 0;
  ASSERT_TRUE(nfs->add_run(run(), {meas("copy", 10)}, &id, &err)) << err;
  EXPECT_NE(nfs->note().find("is on nfs"), std::string::npos) << nfs->note();
  EXPECT_EQ(journal_mode(dir + "/nfs.db"), "delete");
  auto local = Store::open(dir + "/local.db", &err);
  ASSERT_TRUE(local) << err;
  EXPECT_EQ(local->note(), "");
  EXPECT_EQ(journal_mode(dir + "/local.db"), "wal");
}

// issue 35, 1: a store on a network filesystem (rollback journal) that another process holds with
// BEGIN EXCLUSIVE: each open waited 60 s. Now the bound, once for every open sharing the patience.
TEST(Store, ALockedStoreIsWaitedForOnceAndAtMostTheBound) {
  EXPECT_EQ(Patience{}.limit, std::chrono::milliseconds(1500));  // docs/bench.md
  std::string path = store_temp_dir() + "/nfs.db", err;
  setenv("GPUENV_STORE_FS_TYPE", "0x6969", 1);
  ASSERT_TRUE(Store::open(path, &err)) << err;
  unsetenv("GPUENV_STORE_FS_TYPE");
  ASSERT_EQ(journal_mode(path), "delete");
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &holder), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  Patience command;
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(Store::open_existing(path, &err, command));
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(1500));
  EXPECT_LT(waited, std::chrono::seconds(5));
  EXPECT_EQ(err, path + ": locked by another process (database is locked)");
  EXPECT_TRUE(command.found_locked());
  // The command's other reads and writes wait no more, and its reads say nothing more.
  start = std::chrono::steady_clock::now();
  err.clear();
  EXPECT_FALSE(Store::open_existing(path, &err, command));
  EXPECT_EQ(err, "");
  EXPECT_FALSE(Store::open(path, &err, command));
  EXPECT_EQ(err, path + ": locked by another process (database is locked)");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
  sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(holder);
  EXPECT_TRUE(Store::open_existing(path, &err)) << err;  // a new command's patience
}

// A pending stop signal ends the wait at once, whatever the patience's own give_up says.
TEST(Store, APendingStopSignalEndsTheWaitAtOnce) {
  std::string path = store_temp_dir() + "/gpuenv.db", err;
  ASSERT_TRUE(Store::open(path, &err)) << err;
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &holder), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  sigset_t term, old;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &term, &old);
  pthread_kill(pthread_self(), SIGTERM);
  Patience p{std::chrono::seconds(60), nullptr};
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(Store::open(path, &err, p));  // WAL: the writer waits
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
  EXPECT_NE(err.find("locked by another process"), std::string::npos) << err;
  timespec none{0, 0};
  EXPECT_EQ(sigtimedwait(&term, nullptr, &none), SIGTERM);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(holder);
}

}  // namespace
}  // namespace gpuenv::store
