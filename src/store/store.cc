#include "store/store.h"

#include "store/filesystem.h"

#include <sqlite3.h>

#include <limits.h>
#include <stdlib.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "sys/fs.h"
#include "sys/signals.h"
#include "store/fingerprint.h"
#include "store/private_dir.h"
#include "store/sqlite_stmt.h"

namespace gpuenv::store {
namespace {

// 1: bench and check runs. 2: adds jobs (gpuenv run's watched jobs); a
// version-1 store gains the table when it is next opened for writing.
// 3: jobs gain speed (the hook's figures, JSON) and tuned (the settings
// applied), and tune_profiles keeps each command's tuning profile; a
// version-2 store gains them when it is next opened for writing (migrate()).
// 4: jobs gain peak_memory_bytes and peak_memory_source (the job's measured
// peak, issue 40), and memory_plans keeps `plan-memory -- CMD`'s plans; a
// version-3 store gains them as version 2 gained speed.
// 5: jobs gain verdict, verdict_evidence and verdict_fix (the verdict judged
// when the job ended); a version-4 store gains them the same way, its rows
// without one (judged when read, as before).
constexpr int kSchemaVersion = 5;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS machines(
  fingerprint TEXT PRIMARY KEY,
  description TEXT NOT NULL,
  first_seen TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs(
  id INTEGER PRIMARY KEY,
  fingerprint TEXT NOT NULL REFERENCES machines(fingerprint),
  command TEXT NOT NULL,
  started_at TEXT NOT NULL,
  gpuenv_version TEXT NOT NULL,
  hostname TEXT NOT NULL,
  passed INTEGER);
CREATE TABLE IF NOT EXISTS measurements(
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  key TEXT NOT NULL,
  gpu_uuid TEXT NOT NULL,
  peer_uuid TEXT,
  value REAL,
  unit TEXT NOT NULL,
  peak REAL,
  status TEXT NOT NULL,
  detail TEXT NOT NULL,
  measured_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS runs_by_machine ON runs(fingerprint, id);
CREATE INDEX IF NOT EXISTS measurements_by_run ON measurements(run_id);
CREATE TABLE IF NOT EXISTS jobs(
  id INTEGER PRIMARY KEY,
  started_at TEXT NOT NULL,
  duration_s REAL NOT NULL,
  exit_code INTEGER NOT NULL,
  argv TEXT NOT NULL,
  cwd TEXT NOT NULL,
  command_fp TEXT NOT NULL,
  script_path TEXT NOT NULL,
  script_fp TEXT NOT NULL,
  machine_fp TEXT NOT NULL,
  plan TEXT NOT NULL,
  rank INTEGER,
  local_rank INTEGER,
  hostname TEXT NOT NULL,
  gpuenv_version TEXT NOT NULL,
  context TEXT NOT NULL,
  timeline TEXT NOT NULL,
  speed TEXT,
  tuned TEXT NOT NULL DEFAULT '',
  peak_memory_bytes INTEGER,
  peak_memory_source TEXT,
  verdict TEXT,
  verdict_evidence TEXT,
  verdict_fix TEXT);
CREATE INDEX IF NOT EXISTS jobs_by_command ON jobs(command_fp, id);
CREATE TABLE IF NOT EXISTS tune_profiles(
  command_fp TEXT PRIMARY KEY,
  profile TEXT NOT NULL,
  updated_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS memory_plans(
  id INTEGER PRIMARY KEY,
  command_fp TEXT NOT NULL,
  planned_at TEXT NOT NULL,
  peak_bytes REAL NOT NULL,
  gpu TEXT NOT NULL,
  flags TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS memory_plans_by_command ON memory_plans(command_fp, id);
)sql";

constexpr const char* kMeasurementRows =
    "SELECT r.id, r.command, r.gpuenv_version, m.key, m.gpu_uuid, m.peer_uuid, m.value, m.unit, m.peak, "
    "m.status, m.detail, m.measured_at, r.fingerprint FROM measurements m JOIN runs r ON r.id = m.run_id ";

std::optional<double> column_real(sqlite3_stmt* s, int i) {
  if (sqlite3_column_type(s, i) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_double(s, i);
}

HistoryRow read_row(sqlite3_stmt* s) {
  HistoryRow row;
  row.run_id = sqlite3_column_int64(s, 0);
  row.command = column_text(s, 1);
  Measurement& m = row.m;
  m.gpuenv_version = column_text(s, 2);
  m.key = column_text(s, 3);
  m.gpu_uuid = column_text(s, 4);
  if (sqlite3_column_type(s, 5) != SQLITE_NULL) m.peer_uuid = column_text(s, 5);
  m.value = column_real(s, 6);
  m.unit = column_text(s, 7);
  m.peak = column_real(s, 8);
  m.status = column_text(s, 9);
  m.detail = column_text(s, 10);
  m.measured_at = column_text(s, 11);
  row.fingerprint = column_text(s, 12);
  return row;
}

// SQLite refuses a symbolic link anywhere in the name with
// SQLITE_OPEN_NOFOLLOW, so it gets the file under its directory's real path:
// the links on the way there were checked by unsafe_dir().
bool real_name(const std::string& path, std::string* real, std::string* err) {
  std::string dir = fs::dirname(path);
  char buf[PATH_MAX];
  if (!realpath(dir.c_str(), buf)) return *err = fs::errno_text("realpath", dir), false;
  *real = fs::join(buf, fs::basename(path));
  return true;
}

// A path as the path of a file: URI (RFC 3986: what is not unreserved or
// '/' is percent-encoded).
std::string uri_path(const std::string& path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || std::strchr("/-._~", c)) out += char(c);
    else out += {'%', kHex[c >> 4], kHex[c & 15]};
  }
  return out;
}

sqlite3* open_db(const std::string& path, int flags, std::string* err) {
  std::string real = path;
  if (!(flags & SQLITE_OPEN_URI) && !real_name(path, &real, err)) return nullptr;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(real.c_str(), &db, flags | SQLITE_OPEN_NOFOLLOW, nullptr) != SQLITE_OK) {
    *err = sqlite_error(db, "sqlite3_open_v2(" + path + ")");
    sqlite3_close(db);
    return nullptr;
  }
  // A store is outside input: its schema runs no functions of ours, and
  // nothing may corrupt it on purpose.
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  return db;
}

}  // namespace

Store::Store(sqlite3* db, std::string path, Patience patience)
    : db_(db), path_(std::move(path)), patience_(std::move(patience)) {
  sqlite3_busy_handler(db_, &Store::busy, this);
}

Store::~Store() { sqlite3_close(db_); }

// SQLite's busy handler: wait 5 ms more while patience lasts (attempt 0
// starts a new wait).
int Store::busy(void* store, int attempt) {
  auto* s = static_cast<Store*>(store);
  if (attempt == 0) s->busy_since_ = std::chrono::steady_clock::now();
  if (!s->patient()) return 0;
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return 1;
}

// False (and the store found locked) once this wait reached the limit, at a
// stop signal, or when a wait under the same patience ran out before.
bool Store::patient() {
  bool stop = patience_.found_locked() || sys::signal_pending(sys::stop_signals()) ||
              (patience_.give_up && patience_.give_up());
  if (!stop && std::chrono::steady_clock::now() - busy_since_ < patience_.limit) return true;
  *patience_.locked = true;
  return false;
}

std::unique_ptr<Store> Store::open(const std::string& path, std::string* err, Patience patience) {
  if (path.empty()) {
    *err = "no place for the measurement store: set GPUENV_CACHE_ROOT, XDG_CACHE_HOME or HOME, or pass "
           "--cache-root DIR or --db FILE";
    return nullptr;
  }
  if (patience.found_locked()) return *err = locked_error(path), nullptr;
  bool exists = false;
  if (!make_private_dir(fs::dirname(path), err) || !check_store_file(path, true, &exists, err)) return nullptr;
  sqlite3* db = open_db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, err);
  if (!db) return nullptr;
  std::unique_ptr<Store> s(new Store(db, path, std::move(patience)));
  if (!s->init(err)) return nullptr;
  return s;
}

std::unique_ptr<Store> Store::open_existing(const std::string& path, std::string* err, Patience patience) {
  if (path.empty() || patience.found_locked()) return nullptr;
  if (std::string why = unsafe_dir(fs::dirname(path)); !why.empty()) return *err = why, nullptr;
  bool exists = false;
  if (!check_store_file(path, false, &exists, err) || !exists) return nullptr;
  sqlite3* db = open_db(path, SQLITE_OPEN_READWRITE, err);
  if (!db) db = open_db(path, SQLITE_OPEN_READONLY, err);
  if (!db) return nullptr;
  // A reader leaves the WAL to the writers (each checkpoints as it closes):
  // closing without a checkpoint spares every command that reads the store
  // the write-back and the two unlinks (about 0.2 ms after sensing).
  sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  std::unique_ptr<Store> s(new Store(db, path, patience));
  int rc = s->first_read();
  if (rc == SQLITE_OK) return s;
  if ((rc & 0xff) != SQLITE_CANTOPEN && (rc & 0xff) != SQLITE_READONLY)
    return *err = sqlite_error(s->db_, path), nullptr;
  s = open_immutable(path, patience, err);
  if (s && s->first_read() != SQLITE_OK) return *err = sqlite_error(s->db_, path + " (read as immutable)"), nullptr;
  return s;
}

// A WAL store on a read-only filesystem (or in a directory this user may
// not write) cannot be read as usual: the reader must create its -shm file.
// Nobody can be writing it there, so it is read as it is, without locks.
std::unique_ptr<Store> Store::open_immutable(const std::string& path, const Patience& patience, std::string* err) {
  std::string real;
  if (!real_name(path, &real, err)) return nullptr;
  sqlite3* db = open_db("file:" + uri_path(real) + "?immutable=1", SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, err);
  if (!db) return nullptr;
  return std::unique_ptr<Store>(new Store(db, path, patience));
}

// Reads the schema: SQLITE_OK, or the error (a WAL store that cannot make
// its -shm file opens, and fails here with SQLITE_CANTOPEN).
int Store::first_read() {
  Stmt s(db_, "SELECT COUNT(*) FROM sqlite_master");
  return s.ok() && s.step() == SQLITE_ROW ? SQLITE_OK : sqlite3_extended_errcode(db_);
}

bool Store::exec(const char* sql, std::string* err, int* rc) {
  char* msg = nullptr;
  int code = sqlite3_exec(db_, sql, nullptr, nullptr, &msg);
  if (rc) *rc = code;
  if (code == SQLITE_OK) return true;
  if ((code & 0xff) == SQLITE_BUSY) *err = locked_error(path_);
  else *err = msg ? path_ + ": " + msg : sqlite_error(db_, path_);
  sqlite3_free(msg);
  return false;
}

// Switching to WAL takes a lock of its own that the busy handler does not
// always wait for; a few retries cover several processes opening at once.
// On a network filesystem, a rollback journal instead (store/filesystem.h).
bool Store::init(std::string* err) {
  if (!known_version(err)) return false;  // before WAL changes its header
  std::string network = network_filesystem_of(fs::dirname(path_));
  if (!network.empty())
    note_ = "the store " + path_ + " is on " + network + ", where SQLite's WAL cannot work across nodes: it "
            "uses a rollback journal (journal_mode=DELETE); --db FILE on a local disk is faster";
  std::string journal = std::string("PRAGMA journal_mode=") + journal_mode_for(network);
  const char* sync = network.empty() ? "PRAGMA synchronous=NORMAL" : "PRAGMA synchronous=FULL";
  bool set = false;
  int rc = SQLITE_BUSY;
  busy_since_ = std::chrono::steady_clock::now();
  for (int attempt = 0; attempt < 500 && !set && (rc & 0xff) == SQLITE_BUSY && patient(); ++attempt) {
    set = exec(journal.c_str(), err, &rc);
    if (!set) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!set && (rc & 0xff) == SQLITE_BUSY) *patience_.locked = true, *err = locked_error(path_);
  if (!set || !exec(sync, err) || !exec("BEGIN IMMEDIATE", err)) return false;
  if (!known_version(err) || !exec(kSchema, err) || !migrate(err)) {
    std::string ignored;
    exec("ROLLBACK", &ignored);
    return false;
  }
  std::string version = "PRAGMA user_version=" + std::to_string(kSchemaVersion);
  if (!exec(version.c_str(), err)) return exec("ROLLBACK", err), false;
  return exec("COMMIT", err);
}

// Version 2's jobs table lacks speed and tuned, version 3's the peak
// memory, version 4's the verdict: added in place (the rows keep their data;
// their speed, peak and verdict read as unknown, tuned as "").
bool Store::migrate(std::string* err) {
  bool speed = false, peak = false, verdict = false;
  if (!jobs_have_column("speed", &speed, err) || !jobs_have_column("peak_memory_bytes", &peak, err) ||
      !jobs_have_column("verdict", &verdict, err))
    return false;
  if (!speed && !(exec("ALTER TABLE jobs ADD COLUMN speed TEXT", err) &&
                  exec("ALTER TABLE jobs ADD COLUMN tuned TEXT NOT NULL DEFAULT ''", err)))
    return false;
  if (!peak && !(exec("ALTER TABLE jobs ADD COLUMN peak_memory_bytes INTEGER", err) &&
                 exec("ALTER TABLE jobs ADD COLUMN peak_memory_source TEXT", err)))
    return false;
  return verdict || (exec("ALTER TABLE jobs ADD COLUMN verdict TEXT", err) &&
                     exec("ALTER TABLE jobs ADD COLUMN verdict_evidence TEXT", err) &&
                     exec("ALTER TABLE jobs ADD COLUMN verdict_fix TEXT", err));
}

// A newer gpuenv's store: writing to it would reset its version, and the
// newer gpuenv would then take the rows for its own schema's.
bool Store::known_version(std::string* err) {
  Stmt s(db_, "PRAGMA user_version");
  if (!s.ok() || s.step() != SQLITE_ROW) return *err = sqlite_error(db_, path_), false;
  int version = sqlite3_column_int(s.get(), 0);
  if (version <= kSchemaVersion) return true;
  *err = path_ + ": the store's schema is version " + std::to_string(version) + ", newer than this gpuenv's (" +
         std::to_string(kSchemaVersion) + "); upgrade gpuenv, or pass --db FILE for a store of its own";
  return false;
}

bool Store::insert(const Run& run, const std::vector<Measurement>& ms, std::int64_t* id, std::string* err) {
  Stmt machine(db_, "INSERT OR IGNORE INTO machines(fingerprint, description, first_seen) VALUES(?1, ?2, ?3)");
  Stmt runs(db_,
            "INSERT INTO runs(fingerprint, command, started_at, gpuenv_version, hostname, passed) "
            "VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
  Stmt meas(db_,
            "INSERT INTO measurements(run_id, key, gpu_uuid, peer_uuid, value, unit, peak, status, detail, "
            "measured_at) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
  if (!machine.ok() || !runs.ok() || !meas.ok()) return *err = sqlite_error(db_, path_), false;
  machine.text(1, run.fingerprint), machine.text(2, run.machine), machine.text(3, run.started_at);
  if (machine.step() != SQLITE_DONE) return *err = sqlite_error(db_, path_ + ": machines"), false;
  runs.text(1, run.fingerprint), runs.text(2, run.command), runs.text(3, run.started_at);
  runs.text(4, run.gpuenv_version), runs.text(5, run.hostname), runs.boolean(6, run.passed);
  if (runs.step() != SQLITE_DONE) return *err = sqlite_error(db_, path_ + ": runs"), false;
  *id = sqlite3_last_insert_rowid(db_);
  for (const auto& m : ms) {
    sqlite3_reset(meas.get());
    sqlite3_bind_int64(meas.get(), 1, *id);
    meas.text(2, m.key), meas.text(3, m.gpu_uuid), meas.text(4, m.peer_uuid), meas.real(5, m.value);
    meas.text(6, m.unit), meas.real(7, m.peak), meas.text(8, m.status), meas.text(9, m.detail);
    meas.text(10, m.measured_at);
    if (meas.step() != SQLITE_DONE) return *err = sqlite_error(db_, path_ + ": measurements"), false;
  }
  return true;
}

bool Store::add_run(const Run& run, const std::vector<Measurement>& ms, std::int64_t* id, std::string* err) {
  if (!exec("BEGIN IMMEDIATE", err)) return false;
  if (!insert(run, ms, id, err)) {
    std::string ignored;
    exec("ROLLBACK", &ignored);
    return false;
  }
  return exec("COMMIT", err);
}

bool Store::query(const char* sql, const std::string& arg,
                  const std::function<void(HistoryRow, std::string skipped)>& each, std::string* err) {
  Stmt s(db_, sql);
  if (!s.ok()) return *err = sqlite_error(db_, path_), false;
  s.text(1, arg);
  int rc;
  while ((rc = s.step()) == SQLITE_ROW) {
    HistoryRow row = read_row(s.get());
    std::string why = measurement_problem(row.m);
    if (!why.empty()) why = path_ + ": measurement " + row.m.key + " of run " + std::to_string(row.run_id) + ": " + why;
    each(std::move(row), std::move(why));
  }
  if (rc != SQLITE_DONE) return *err = sqlite_error(db_, path_), false;
  return true;
}

// The newest measurement of each (machine, key, GPU, peer) of the machines
// `machines` (SQL over ?1) selects.
bool Store::latest_of(const char* machines, const std::string& arg, std::map<std::string, MachineMeasurements>* out,
                      std::string* err) {
  std::string sql = std::string(kMeasurementRows) +
                    "WHERE m.id IN (SELECT MAX(m2.id) FROM measurements m2 JOIN runs r2 ON r2.id = m2.run_id "
                    "WHERE r2.fingerprint " + machines +
                    " GROUP BY r2.fingerprint, m2.key, m2.gpu_uuid, IFNULL(m2.peer_uuid, '')) "
                    "ORDER BY r.fingerprint, m.key, m.gpu_uuid, m.peer_uuid";
  return query(sql.c_str(), arg, [out](HistoryRow row, std::string skipped) {
    MachineMeasurements& machine = (*out)[row.fingerprint];
    if (skipped.empty()) machine.latest.push_back(std::move(row.m));
    else machine.skipped.push_back(std::move(skipped));
  }, err);
}

bool Store::latest(const std::string& fingerprint, MachineMeasurements* out, std::string* err) {
  std::map<std::string, MachineMeasurements> one;
  if (!latest_of("= ?1", fingerprint, &one, err)) return false;
  if (auto it = one.find(fingerprint); it != one.end()) *out = std::move(it->second);
  return true;
}

bool Store::latest_on_host(const std::string& hostname, std::map<std::string, MachineMeasurements>* out,
                           std::string* err) {
  return latest_of("IN (SELECT DISTINCT fingerprint FROM runs WHERE hostname = ?1)", hostname, out, err);
}

bool Store::ran_elsewhere(const std::string& hostname, bool* yes, std::string* err) {
  Stmt s(db_, "SELECT EXISTS(SELECT 1 FROM runs WHERE hostname != ?1)");
  if (!s.ok()) return *err = sqlite_error(db_, path_), false;
  s.text(1, hostname);
  if (s.step() != SQLITE_ROW) return *err = sqlite_error(db_, path_), false;
  *yes = sqlite3_column_int(s.get(), 0) != 0;
  return true;
}

bool Store::history(const std::string& fingerprint, std::vector<HistoryRow>* out, std::string* err,
                    std::vector<std::string>* skipped) {
  static const std::string sql = std::string(kMeasurementRows) + "WHERE r.fingerprint = ?1 ORDER BY m.id";
  return query(sql.c_str(), fingerprint, [out, skipped](HistoryRow row, std::string why) {
    if (why.empty()) out->push_back(std::move(row));
    else if (skipped) skipped->push_back(std::move(why));
  }, err);
}

bool Store::count(std::int64_t* n, std::string* err) {
  Stmt s(db_, "SELECT COUNT(*) FROM measurements");
  if (!s.ok() || s.step() != SQLITE_ROW) return *err = sqlite_error(db_, path_), false;
  *n = sqlite3_column_int64(s.get(), 0);
  return true;
}

Run new_run(const Machine& m, const std::string& command, const std::string& started_at) {
  return {fingerprint(m), describe_machine(m),          command,     started_at,
          GPUENV_VERSION, m.host.hostname.value_or(""), std::nullopt};
}

}  // namespace gpuenv::store
