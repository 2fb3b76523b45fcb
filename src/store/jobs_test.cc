#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>

#include "store/fingerprint.h"
#include "forked.h"
#include "store/store.h"

namespace gpuenv::store {
namespace {

std::string jobs_temp_dir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "gpuenv-jobs-XXXXXX").string();
  return mkdtemp(tmpl.data());
}

Job job(const std::string& cmd, std::optional<int> rank = std::nullopt, double util = 50) {
  Job j;
  j.argv = {"python3", cmd, "--lr", "0.1 x"};
  j.cwd = "/work";
  j.command_fp = command_fingerprint(j.argv, j.cwd);
  j.script_path = cmd, j.script_fp = "fp-0000000000000001";
  j.machine_fp = "fp-m", j.plan_json = R"({"settings":[]})";
  j.started_at = "2025-01-01T00:00:00Z", j.duration_s = 12.5, j.exit_code = 130;
  j.rank = rank, j.local_rank = rank;
  j.hostname = "h", j.gpuenv_version = "0.1.0";
  j.context.gpus.push_back({"GPU-a", "NVIDIA H200", 143771.0, 5, 16, 1980.0, 700.0});
  j.context.cpus_per_gpu = 16;
  for (int i = 0; i < 20; ++i) {
    JobSample s;
    s.t = i;
    s.v[kUtilPct] = util;
    s.v[kMemMib] = 1000 + i;
    j.timeline.add(s);
  }
  return j;
}

TEST(StoreJobs, KeepsEveryField) {
  std::string err;
  auto db = Store::open(jobs_temp_dir() + "/gpuenv.db", &err);
  ASSERT_TRUE(db) << err;
  Job a = job("train.py");
  ASSERT_TRUE(db->add_job(a, &a.id, &err)) << err;
  std::optional<Job> back;
  ASSERT_TRUE(db->job(a.id, &back, &err)) << err;
  ASSERT_TRUE(back);
  EXPECT_EQ(back->argv, a.argv);
  EXPECT_EQ(back->cwd, a.cwd);
  EXPECT_EQ(back->command_fp, a.command_fp);
  EXPECT_EQ(back->script_path, "train.py");
  EXPECT_EQ(back->script_fp, a.script_fp);
  EXPECT_EQ(back->plan_json, a.plan_json);
  EXPECT_EQ(back->duration_s, 12.5);
  EXPECT_EQ(back->exit_code, 130);
  EXPECT_EQ(back->rank, std::nullopt);
  EXPECT_EQ(back->context, a.context);
  EXPECT_EQ(back->timeline.points(), a.timeline.points());
  EXPECT_FALSE(back->peak_memory);
  Job peak = job("train.py");
  peak.peak_memory = JobPeakMemory{33285996544, "torch"};
  ASSERT_TRUE(db->add_job(peak, &peak.id, &err)) << err;
  ASSERT_TRUE(db->job(peak.id, &back, &err)) << err;
  EXPECT_EQ(back->peak_memory, peak.peak_memory);
  std::optional<Job> none;
  ASSERT_TRUE(db->job(peak.id + 1, &none, &err)) << err;
  EXPECT_FALSE(none);
}

TEST(StoreJobs, LastJobOfACommandPrefersItsRank) {
  std::string err;
  auto db = Store::open(jobs_temp_dir() + "/gpuenv.db", &err);
  ASSERT_TRUE(db) << err;
  std::int64_t id = 0, rank1 = 0, newest = 0;
  ASSERT_TRUE(db->add_job(job("train.py", 1, 10), &rank1, &err));
  ASSERT_TRUE(db->add_job(job("other.py", 0), &id, &err));
  ASSERT_TRUE(db->add_job(job("train.py", 0, 20), &newest, &err));
  std::string fp = job("train.py").command_fp;
  std::optional<Job> j;
  ASSERT_TRUE(db->last_job(fp, 1, &j, &err)) << err;
  ASSERT_TRUE(j);
  EXPECT_EQ(j->id, rank1);
  j.reset();
  ASSERT_TRUE(db->last_job(fp, std::nullopt, &j, &err)) << err;
  EXPECT_EQ(j->id, newest);
  j.reset();
  ASSERT_TRUE(db->last_job(fp, 7, &j, &err)) << err;
  EXPECT_EQ(j->id, newest);  // no job of rank 7: the newest of any
  j.reset();
  ASSERT_TRUE(db->last_job("fp-none", std::nullopt, &j, &err)) << err;
  EXPECT_FALSE(j);
  std::vector<Job> recent;
  ASSERT_TRUE(db->recent_jobs(2, &recent, &err)) << err;
  ASSERT_EQ(recent.size(), 2u);
  EXPECT_EQ(recent[0].id, newest);
}

// The schema gpuenv 0.1 wrote (version 1: no jobs table).
void write_version_1(const std::string& path) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const char* sql =
      "CREATE TABLE machines(fingerprint TEXT PRIMARY KEY, description TEXT NOT NULL, first_seen TEXT NOT NULL);"
      "CREATE TABLE runs(id INTEGER PRIMARY KEY, fingerprint TEXT NOT NULL REFERENCES machines(fingerprint), "
      "command TEXT NOT NULL, started_at TEXT NOT NULL, gpuenv_version TEXT NOT NULL, hostname TEXT NOT NULL, "
      "passed INTEGER);"
      "CREATE TABLE measurements(id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id), key TEXT NOT "
      "NULL, gpu_uuid TEXT NOT NULL, peer_uuid TEXT, value REAL, unit TEXT NOT NULL, peak REAL, status TEXT NOT NULL, "
      "detail TEXT NOT NULL, measured_at TEXT NOT NULL);"
      "INSERT INTO machines VALUES('fp-1', 'm', 'now');"
      "INSERT INTO runs VALUES(1, 'fp-1', 'bench', 'now', '0.1.0', 'h', NULL);"
      "INSERT INTO measurements VALUES(1, 1, 'copy', 'GPU-a', NULL, 10, 'GB/s', 100, 'ok', 'd', 'now');"
      "PRAGMA user_version=1;";
  ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
}

TEST(StoreJobs, AVersion1StoreIsMigratedAndKeepsItsRuns) {
  std::string dir = jobs_temp_dir(), path = dir + "/gpuenv.db", err;
  chmod(dir.c_str(), 0700);
  write_version_1(path);
  {
    auto reader = Store::open_existing(path, &err);  // reading does not migrate: no jobs yet
    ASSERT_TRUE(reader) << err;
    std::vector<Job> jobs;
    ASSERT_TRUE(reader->recent_jobs(10, &jobs, &err)) << err;
    EXPECT_TRUE(jobs.empty());
  }
  auto db = Store::open(path, &err);
  ASSERT_TRUE(db) << err;
  std::int64_t n = 0, id = 0;
  ASSERT_TRUE(db->count(&n, &err));
  EXPECT_EQ(n, 1);  // the bench figure is still there
  ASSERT_TRUE(db->add_job(job("train.py"), &id, &err)) << err;
  sqlite3* raw = nullptr;
  sqlite3_open(path.c_str(), &raw);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(raw, "PRAGMA user_version", -1, &s, nullptr);
  ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(s, 0), 5);
  sqlite3_finalize(s);
  sqlite3_close(raw);
}

void raw_sql(const std::string& path, const std::string& sql) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(raw) << sql;
  sqlite3_close(raw);
}

// A store of today's schema with one job, taken back to an older version by `sql`.
void write_older(const std::string& path, const std::string& sql) {
  std::string err;
  std::int64_t id = 0;
  {
    auto db = Store::open(path, &err);
    ASSERT_TRUE(db) << err;
    ASSERT_TRUE(db->add_job(job("old.py"), &id, &err)) << err;
  }
  raw_sql(path, sql);
}

// The jobs table gpuenv wrote at schema version 2 (no speed, no tuned), with one row.
void write_version_2(const std::string& path) {
  write_older(path, "ALTER TABLE jobs DROP COLUMN verdict; ALTER TABLE jobs DROP COLUMN verdict_evidence; "
                    "ALTER TABLE jobs DROP COLUMN verdict_fix; "
                    "DROP TABLE tune_profiles; ALTER TABLE jobs DROP COLUMN tuned; ALTER TABLE jobs DROP COLUMN speed; "
                    "DROP TABLE memory_plans; ALTER TABLE jobs DROP COLUMN peak_memory_source; "
                    "ALTER TABLE jobs DROP COLUMN peak_memory_bytes; PRAGMA user_version=2;");
}

TEST(StoreJobs, AVersion2StoreGainsSpeedTunedAndProfiles) {
  std::string dir = jobs_temp_dir(), path = dir + "/gpuenv.db", err;
  chmod(dir.c_str(), 0700);
  write_version_2(path);
  Job old = job("old.py");
  {
    auto reader = Store::open_existing(path, &err);  // read as it is, not migrated
    ASSERT_TRUE(reader) << err;
    std::vector<Job> jobs;
    ASSERT_TRUE(reader->recent_jobs(10, &jobs, &err)) << err;
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_FALSE(jobs[0].speed);
    EXPECT_EQ(jobs[0].tuned, "");
    std::optional<TuneProfile> p;
    EXPECT_TRUE(reader->profile(old.command_fp, &p, &err)) << err;
    EXPECT_FALSE(p);
    std::optional<Job> first;
    EXPECT_TRUE(reader->first_job(old.command_fp, &first, &err)) << err;
    EXPECT_FALSE(first);
  }
  auto db = Store::open(path, &err);
  ASSERT_TRUE(db) << err;
  Job fast = job("old.py");
  fast.speed = JobSpeed{100, 101, 4.5, 3.0, 0.25, 8.0, 1.5};
  fast.tuned = "num_workers=15,pin_memory=True";
  std::int64_t id = 0;
  ASSERT_TRUE(db->add_job(fast, &id, &err)) << err;
  std::vector<Job> jobs;
  ASSERT_TRUE(db->recent_jobs(10, &jobs, &err)) << err;
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].speed, fast.speed);
  EXPECT_EQ(jobs[0].tuned, fast.tuned);
  EXPECT_FALSE(jobs[1].speed);  // the old row keeps its data, its speed unknown
  EXPECT_EQ(jobs[1].argv, old.argv);
  std::optional<Job> first;
  ASSERT_TRUE(db->first_job(old.command_fp, &first, &err)) << err;
  ASSERT_TRUE(first);
  EXPECT_EQ(first->id, id);  // the first with a measured speed
  TuneProfile p;
  p.command_fp = old.command_fp;
  p.runs.push_back({1, "2025-01-01T00:00:00Z", "", 2.0, 30.0, 5.0, ""});
  p.runs.push_back({2, "2025-01-02T00:00:00Z", "num_workers=15", 10.0, 20.0, std::nullopt, ""});
  p.next = "num_workers=11", p.kept = "num_workers=15", p.dropped = {"persistent_workers"}, p.note = "n";
  ASSERT_TRUE(db->put_profile(p, "now", &err)) << err;
  p.note = "replaced";
  ASSERT_TRUE(db->put_profile(p, "later", &err)) << err;
  std::optional<TuneProfile> back;
  ASSERT_TRUE(db->profile(old.command_fp, &back, &err)) << err;
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, p);
}

// The schema of version 3 (no peak memory, no memory plans), with one job.
void write_version_3(const std::string& path) {
  write_older(path, "ALTER TABLE jobs DROP COLUMN verdict; ALTER TABLE jobs DROP COLUMN verdict_evidence; "
                    "ALTER TABLE jobs DROP COLUMN verdict_fix; "
                    "DROP TABLE memory_plans; ALTER TABLE jobs DROP COLUMN peak_memory_source; "
                    "ALTER TABLE jobs DROP COLUMN peak_memory_bytes; PRAGMA user_version=3;");
}

int user_version(const std::string& path) {
  sqlite3* raw = nullptr;
  sqlite3_open(path.c_str(), &raw);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(raw, "PRAGMA user_version", -1, &s, nullptr);
  int v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int(s, 0) : -1;
  sqlite3_finalize(s);
  sqlite3_close(raw);
  return v;
}

PlannedPeak plan(const std::string& fp, const std::string& at, double gib) {
  return {fp, gib * (1 << 30), "NVIDIA H200", "--model Qwen/Qwen2.5-0.5B --seq 1024 --batch 8", at};
}

// Issue 40, 4: a version-3 store is read as it is, then gains the peak columns and memory_plans.
TEST(StoreJobs, AVersion3StoreGainsThePeakAndThePlans) {
  std::string dir = jobs_temp_dir(), path = dir + "/gpuenv.db", err;
  chmod(dir.c_str(), 0700);
  write_version_3(path);
  Job old = job("old.py");
  {
    auto reader = Store::open_existing(path, &err);
    ASSERT_TRUE(reader) << err;
    std::vector<Job> jobs;
    ASSERT_TRUE(reader->recent_jobs(10, &jobs, &err)) << err;
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_FALSE(jobs[0].peak_memory);
    std::optional<PlannedPeak> p;
    EXPECT_TRUE(reader->planned_peak(old.command_fp, "9999", &p, &err)) << err;
    EXPECT_FALSE(p);
  }
  EXPECT_EQ(user_version(path), 3);
  auto db = Store::open(path, &err);
  ASSERT_TRUE(db) << err;
  EXPECT_EQ(user_version(path), 5);
  Job measured = job("old.py");
  measured.peak_memory = JobPeakMemory{8589934592, "nvml"};
  ASSERT_TRUE(db->add_job(measured, &measured.id, &err)) << err;
  ASSERT_TRUE(db->add_planned_peak(plan(old.command_fp, "2025-01-01T00:00:00Z", 7.5), &err)) << err;
  std::vector<Job> jobs;
  ASSERT_TRUE(db->recent_jobs(10, &jobs, &err)) << err;
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].peak_memory, measured.peak_memory);
  EXPECT_FALSE(jobs[1].peak_memory);  // the old row keeps its data, its peak unknown
  EXPECT_EQ(jobs[1].argv, old.argv);
  std::optional<PlannedPeak> p;
  ASSERT_TRUE(db->planned_peak(old.command_fp, "2025-01-01T00:00:00Z", &p, &err)) << err;
  ASSERT_TRUE(p);
  EXPECT_EQ(*p, plan(old.command_fp, "2025-01-01T00:00:00Z", 7.5));
}

// The verdict judged when the job ended is kept with it.
TEST(StoreJobs, TheVerdictRoundTrips) {
  std::string err;
  auto db = Store::open(jobs_temp_dir() + "/gpuenv.db", &err);
  ASSERT_TRUE(db) << err;
  Job j = job("train.py");
  j.verdict = JobVerdict{"input-bound", "the GPU was busy 30% of the time", "load batches in worker processes"};
  ASSERT_TRUE(db->add_job(j, &j.id, &err)) << err;
  Job none = job("train.py");
  ASSERT_TRUE(db->add_job(none, &none.id, &err)) << err;
  std::optional<Job> back;
  ASSERT_TRUE(db->job(j.id, &back, &err)) << err;
  ASSERT_TRUE(back);
  EXPECT_EQ(back->verdict, j.verdict);
  ASSERT_TRUE(db->job(none.id, &back, &err)) << err;
  EXPECT_FALSE(back->verdict);
}

// The schema of version 4 (no verdict), with one job.
void write_version_4(const std::string& path) {
  write_older(path, "ALTER TABLE jobs DROP COLUMN verdict; ALTER TABLE jobs DROP COLUMN verdict_evidence; "
                    "ALTER TABLE jobs DROP COLUMN verdict_fix; PRAGMA user_version=4;");
}

// A version-4 store is read as it is (its rows without a verdict), then gains the verdict columns.
TEST(StoreJobs, AVersion4StoreGainsTheVerdict) {
  std::string dir = jobs_temp_dir(), path = dir + "/gpuenv.db", err;
  chmod(dir.c_str(), 0700);
  write_version_4(path);
  {
    auto reader = Store::open_existing(path, &err);
    ASSERT_TRUE(reader) << err;
    std::vector<Job> jobs;
    ASSERT_TRUE(reader->recent_jobs(10, &jobs, &err)) << err;
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_FALSE(jobs[0].verdict);
  }
  EXPECT_EQ(user_version(path), 4);
  auto db = Store::open(path, &err);
  ASSERT_TRUE(db) << err;
  EXPECT_EQ(user_version(path), 5);
  Job judged = job("old.py");
  judged.verdict = JobVerdict{"busy", "e", "f"};
  ASSERT_TRUE(db->add_job(judged, &judged.id, &err)) << err;
  std::vector<Job> jobs;
  ASSERT_TRUE(db->recent_jobs(10, &jobs, &err)) << err;
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].verdict, judged.verdict);
  EXPECT_FALSE(jobs[1].verdict);  // the old row keeps its data, without a verdict
  EXPECT_EQ(jobs[1].argv, job("old.py").argv);
}

// A job is compared with the newest plan of its command made before it started.
TEST(StoreJobs, AJobGetsTheNewestPlanOfItsCommandBeforeIt) {
  std::string err;
  auto db = Store::open(jobs_temp_dir() + "/gpuenv.db", &err);
  ASSERT_TRUE(db) << err;
  for (const PlannedPeak& p : {plan("fp-a", "2025-01-01T10:00:00Z", 10), plan("fp-b", "2025-01-01T11:00:00Z", 99),
                               plan("fp-a", "2025-01-01T12:00:00Z", 12)})
    ASSERT_TRUE(db->add_planned_peak(p, &err)) << err;
  struct Row {
    const char* fp;
    const char* at;
    std::optional<double> gib;
  } rows[] = {
      {"fp-a", "2025-01-01T09:59:59Z", std::nullopt},  // run before any plan
      {"fp-a", "2025-01-01T10:00:00Z", 10},            // the same second
      {"fp-a", "2025-01-01T11:30:00Z", 10},
      {"fp-a", "2025-01-02T00:00:00Z", 12},            // replanned: the newer plan
      {"fp-b", "2025-01-02T00:00:00Z", 99},
      {"fp-c", "2025-01-02T00:00:00Z", std::nullopt},
  };
  for (const Row& r : rows) {
    std::optional<PlannedPeak> p;
    ASSERT_TRUE(db->planned_peak(r.fp, r.at, &p, &err)) << err;
    ASSERT_EQ(p.has_value(), r.gib.has_value()) << r.fp << " " << r.at;
    if (p) {
      EXPECT_EQ(p->peak_bytes, *r.gib * (1 << 30)) << r.fp << " " << r.at;
    }
  }
}

TEST(StoreJobs, APlanGpuenvCouldNotHaveWrittenIsRefused) {
  for (const char* peak : {"-1", "0", "'x'", "1e300"}) {
    std::string path = jobs_temp_dir() + "/gpuenv.db", err;
    auto db = Store::open(path, &err);
    ASSERT_TRUE(db) << err;
    raw_sql(path, std::string("INSERT INTO memory_plans(id, command_fp, planned_at, peak_bytes, gpu, flags) "
                              "VALUES(3, 'fp-x', 'a', ") + peak + ", '', '')");
    std::optional<PlannedPeak> p;
    EXPECT_FALSE(db->planned_peak("fp-x", "b", &p, &err)) << peak;
    EXPECT_FALSE(p) << peak;
    EXPECT_EQ(err, path + ": memory plan 3: peak_bytes is out of range (above 0, up to 4 EiB)") << peak;
  }
}

TEST(StoreJobs, ADamagedProfileNamesWhatFailed) {
  std::string path = jobs_temp_dir() + "/gpuenv.db", err;
  auto db = Store::open(path, &err);
  ASSERT_TRUE(db) << err;
  sqlite3* raw = nullptr;
  sqlite3_open(path.c_str(), &raw);
  sqlite3_exec(raw, "INSERT INTO tune_profiles VALUES('fp-x', '{\"runs\":[{\"wall_s\":-1}]}', 'now')", nullptr, nullptr,
               nullptr);
  sqlite3_close(raw);
  std::optional<TuneProfile> p;
  EXPECT_FALSE(db->profile("fp-x", &p, &err));
  EXPECT_NE(err.find("the tuning profile of fp-x: profile.runs[0].wall_s: out of range"), std::string::npos) << err;
}

TEST(StoreJobs, ADamagedRowNamesItself) {
  std::string path = jobs_temp_dir() + "/gpuenv.db", err;
  std::int64_t id = 0;
  {
    auto db = Store::open(path, &err);
    ASSERT_TRUE(db->add_job(job("train.py"), &id, &err)) << err;
  }
  sqlite3* raw = nullptr;
  sqlite3_open(path.c_str(), &raw);
  sqlite3_exec(raw, "UPDATE jobs SET timeline = '{\"points\": 3}'", nullptr, nullptr, nullptr);
  sqlite3_close(raw);
  auto db = Store::open(path, &err);
  std::vector<Job> jobs;
  EXPECT_FALSE(db->recent_jobs(5, &jobs, &err));
  EXPECT_NE(err.find("job " + std::to_string(id) + ": timeline.points: expected an array"), std::string::npos) << err;
}

// issue 21, 14: one such row made the whole list (gpuenv report) fail.
TEST(StoreJobs, ADamagedRowIsLeftOutOfTheListWithItsReason) {
  std::string path = jobs_temp_dir() + "/gpuenv.db", err;
  std::int64_t bad = 0, good = 0;
  {
    auto db = Store::open(path, &err);
    ASSERT_TRUE(db->add_job(job("a.py"), &bad, &err)) << err;
    ASSERT_TRUE(db->add_job(job("b.py"), &good, &err)) << err;
  }
  sqlite3* raw = nullptr;
  sqlite3_open(path.c_str(), &raw);
  std::string sql = "UPDATE jobs SET context = '{' WHERE id = " + std::to_string(bad);
  sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr);
  sqlite3_close(raw);
  auto db = Store::open(path, &err);
  std::vector<Job> jobs;
  std::vector<std::string> skipped;
  ASSERT_TRUE(db->recent_jobs(5, &jobs, &err, &skipped)) << err;
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id, good);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_NE(skipped[0].find("job " + std::to_string(bad) + ": context: expected an object"), std::string::npos)
      << skipped[0];
}

// issue 21, 20: a duration of 1e308 s printed as a negative number of minutes.
TEST(StoreJobs, AnOutOfRangeDurationIsLeftOut) {
  std::string err;
  auto db = Store::open(jobs_temp_dir() + "/gpuenv.db", &err);
  ASSERT_TRUE(db) << err;
  Job j = job("train.py");
  j.duration_s = 1e308;
  ASSERT_TRUE(db->add_job(j, &j.id, &err)) << err;
  std::vector<Job> jobs;
  std::vector<std::string> skipped;
  ASSERT_TRUE(db->recent_jobs(5, &jobs, &err, &skipped)) << err;
  EXPECT_TRUE(jobs.empty());
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_NE(skipped[0].find("job " + std::to_string(j.id) + ": duration_s 1e+308 is out of range"), std::string::npos)
      << skipped[0];
}

// issue 35, 6: values gpuenv never writes, put in with SQL, are left out and
// named: INT64_MIN read as "exit 0", INT64_MAX as -1, a kept num_workers of
// 2147483647 applied to every run and handed to the hook.
TEST(StoreJobs, HostileColumnsAreLeftOutWithTheirReason) {
  struct Row {
    std::string set, reason;
  } rows[] = {
      {"exit_code = -9223372036854775808", "exit_code -9223372036854775808 is out of range (0 to 255)"},
      {"exit_code = 9223372036854775807", "exit_code 9223372036854775807 is out of range (0 to 255)"},
      {"exit_code = 256", "exit_code 256 is out of range (0 to 255)"},
      {"exit_code = -1", "exit_code -1 is out of range (0 to 255)"},
      {"exit_code = 'x'", "exit_code is not an integer"},
      {"rank = 4294967296", "rank 4294967296 is out of range (0 to 999999)"},
      {"local_rank = -1", "local_rank -1 is out of range (0 to 999999)"},
      {"tuned = 'num_workers=2147483647'", "tuned: num_workers=2147483647 is out of range (0 to 32)"},
      {"tuned = 'pin_memory=__import__(\"os\")'", "tuned: pin_memory=__import__(\"os\") is not True or False"},
      {"tuned = 'prefetch_factor=99'", "tuned: \"prefetch_factor=99\" is not a setting --tune writes"},
      {"peak_memory_bytes = -1, peak_memory_source = 'torch'", "peak_memory_bytes -1 is out of range (0 to 2^50)"},
      {"peak_memory_bytes = 1125899906842625, peak_memory_source = 'nvml'",
       "peak_memory_bytes 1125899906842625 is out of range (0 to 2^50)"},
      {"peak_memory_bytes = 1.5, peak_memory_source = 'torch'", "peak_memory_bytes is not an integer"},
      {"peak_memory_bytes = 'x', peak_memory_source = 'torch'", "peak_memory_bytes is not an integer"},
      {"peak_memory_bytes = 7", "peak_memory_source is \"\", not torch or nvml"},
      {"peak_memory_bytes = 7, peak_memory_source = 'guess'", "peak_memory_source is \"guess\", not torch or nvml"},
      {"peak_memory_source = 'torch'", "peak_memory_source without peak_memory_bytes"},
      {"peak_memory_bytes = 7, peak_memory_source = X'FF'", "peak_memory_source is \"\xef\xbf\xbd\", not torch or nvml"},
  };
  for (const auto& r : rows) {
    std::string path = jobs_temp_dir() + "/gpuenv.db", err;
    std::int64_t bad = 0, good = 0;
    {
      auto db = Store::open(path, &err);
      ASSERT_TRUE(db->add_job(job("a.py", 1), &bad, &err)) << err;
      ASSERT_TRUE(db->add_job(job("b.py", 1), &good, &err)) << err;
    }
    raw_sql(path, "UPDATE jobs SET " + r.set + " WHERE id = " + std::to_string(bad));
    auto db = Store::open(path, &err);
    std::vector<Job> jobs;
    std::vector<std::string> skipped;
    ASSERT_TRUE(db->recent_jobs(5, &jobs, &err, &skipped)) << err;
    ASSERT_EQ(jobs.size(), 1u) << r.set;
    EXPECT_EQ(jobs[0].id, good);
    ASSERT_EQ(skipped.size(), 1u) << r.set;
    EXPECT_EQ(skipped[0], path + ": job " + std::to_string(bad) + ": " + r.reason) << r.set;
    std::optional<Job> one;
    EXPECT_FALSE(db->last_job(job("a.py").command_fp, 1, &one, &err)) << r.set;
    EXPECT_FALSE(one) << r.set;
  }
}

TEST(StoreJobs, TheLargestValuesGpuenvWritesReadBack) {
  std::string err;
  auto db = Store::open(jobs_temp_dir() + "/gpuenv.db", &err);
  Job j = job("train.py", 999999);
  j.exit_code = 255, j.tuned = "num_workers=32,pin_memory=False,persistent_workers=True";
  ASSERT_TRUE(db->add_job(j, &j.id, &err)) << err;
  std::optional<Job> back;
  ASSERT_TRUE(db->job(j.id, &back, &err)) << err;
  ASSERT_TRUE(back);
  EXPECT_EQ(back->exit_code, 255);
  EXPECT_EQ(back->rank, 999999);
  EXPECT_EQ(back->tuned, j.tuned);
}

TEST(StoreJobs, AProfileGpuenvCouldNotHaveWrittenIsRefused) {
  const std::pair<std::string, std::string> rows[] = {
      {R"({"runs":[],"kept":"num_workers=2147483647,pin_memory=True"})",
       "profile.kept: num_workers=2147483647 is out of range (0 to 32)"},
      {R"({"runs":[],"next":"num_workers=-1"})", "profile.next: num_workers=-1 is out of range (0 to 32)"},
      {R"({"runs":[{"settings":"num_workers=99","wall_s":1}]})",
       "profile.runs[0].settings: num_workers=99 is out of range (0 to 32)"},
      {R"({"runs":[],"dropped":["rm -rf"]})", "profile.dropped: holds an unknown setting"},
  };
  for (const auto& [profile, reason] : rows) {
    std::string path = jobs_temp_dir() + "/gpuenv.db", err;
    auto db = Store::open(path, &err);
    ASSERT_TRUE(db) << err;
    raw_sql(path, "INSERT INTO tune_profiles VALUES('fp-x', '" + profile + "', 'now')");
    std::optional<TuneProfile> p;
    EXPECT_FALSE(db->profile("fp-x", &p, &err)) << profile;
    EXPECT_FALSE(p);
    EXPECT_EQ(err, path + ": the tuning profile of fp-x: " + reason);
  }
}

// A closed WAL store (no -wal, no -shm file) in a read-only bind mount: a
// read-only filesystem, which chmod cannot make for root.
bool read_only_view(const std::string& dir) {
  return unshare(CLONE_NEWNS) == 0 && mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
         mount(dir.c_str(), dir.c_str(), nullptr, MS_BIND, nullptr) == 0 &&
         mount(nullptr, dir.c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr) == 0;
}

// issue 21, 14: it could not be read (report exited 1, the bench labels vanished).
TEST(StoreJobs, AWalStoreOnAReadOnlyFilesystemIsRead) {
  std::string dir = jobs_temp_dir(), path = dir + "/gpuenv.db", err;
  std::int64_t id = 0;
  {
    auto db = Store::open(path, &err);
    ASSERT_TRUE(db && db->add_job(job("train.py"), &id, &err)) << err;
  }
  ASSERT_FALSE(std::filesystem::exists(path + "-shm"));
  std::vector<int> codes = testing::run_forked(1, [&](int) {
    if (!read_only_view(dir)) _exit(77);
    if (access(dir.c_str(), W_OK) == 0 || errno != EROFS) _exit(78);
    std::string e;
    auto db = Store::open_existing(path, &e);
    std::vector<Job> jobs;
    std::int64_t n = -1;
    bool ok = db && db->recent_jobs(5, &jobs, &e) && jobs.size() == 1 && jobs[0].id == id && db->count(&n, &e);
    if (!ok) fprintf(stderr, "%s\n", e.c_str());
    return ok && n == 0;
  });
  if (codes[0] == 77) GTEST_SKIP() << "no mount namespace here (needs CAP_SYS_ADMIN)";
  EXPECT_EQ(codes[0], 0);
}

// 8 ranks of a job record themselves at once: none is lost.
TEST(StoreJobs, EightConcurrentRanksLoseNothing) {
  constexpr int kRanks = 8, kJobs = 25;
  std::string path = jobs_temp_dir() + "/gpuenv.db";
  std::vector<int> codes = testing::run_forked(kRanks, [&](int r) {
    std::string err;
    auto db = Store::open(path, &err);
    bool ok = db != nullptr;
    for (int i = 0; ok && i < kJobs; ++i) {
      std::int64_t id = 0;
      ok = db->add_job(job("train.py", r), &id, &err);
    }
    if (!ok) std::fprintf(stderr, "rank %d: %s\n", r, err.c_str());
    return ok;
  });
  EXPECT_EQ(codes, std::vector<int>(kRanks, 0));
  std::string err;
  auto db = Store::open(path, &err);
  ASSERT_TRUE(db) << err;
  std::vector<Job> jobs;
  ASSERT_TRUE(db->recent_jobs(10000, &jobs, &err)) << err;
  EXPECT_EQ(jobs.size(), std::size_t(kRanks * kJobs));
  std::map<int, int> per_rank;
  for (const auto& j : jobs) ++per_rank[j.rank.value_or(-1)];
  for (int r = 0; r < kRanks; ++r) EXPECT_EQ(per_rank[r], kJobs) << r;
}

TEST(StoreJobs, CommandFingerprints) {
  EXPECT_EQ(command_fingerprint({"python", "train.py"}, "/a"), command_fingerprint({"python", "train.py"}, "/a"));
  EXPECT_NE(command_fingerprint({"python", "train.py"}, "/a"), command_fingerprint({"python", "train.py"}, "/b"));
  EXPECT_NE(command_fingerprint({"a b"}, "/a"), command_fingerprint({"a", "b"}, "/a"));
  EXPECT_EQ(text_fingerprint("x").size(), 19u);
}

}  // namespace
}  // namespace gpuenv::store
