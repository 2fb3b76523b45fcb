// The measurement store: one SQLite database (WAL, a bounded wait for locks) keeping
// every `gpuenv bench` / `gpuenv check` run with its figures, keyed by the
// machine's fingerprint, and every job `gpuenv run` watched. Several processes (8 ranks of a job) may write at
// once; each run is one transaction, and none is lost.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/job.h"
#include "model/machine.h"
#include "model/measurement.h"
#include "model/tune_profile.h"
#include "store/cache_root.h"

struct sqlite3;

namespace gpuenv::store {

/// One run of bench or check on one machine.
struct Run {
  std::string fingerprint;
  std::string machine;     // describe_machine()
  std::string command;     // bench|check
  std::string started_at;  // RFC 3339 UTC
  std::string gpuenv_version;
  std::string hostname;
  std::optional<bool> passed;  // check's verdict
};

/// A Run of `command` for this machine (its fingerprint and description,
/// this gpuenv's version, the host name), started at `started_at`.
Run new_run(const Machine& m, const std::string& command, const std::string& started_at);

/// A stored measurement with the run it came from.
struct HistoryRow {
  std::int64_t run_id = 0;
  std::string command;
  std::string fingerprint;  // the run's machine
  Measurement m;
};

/// One machine's newest measurements, and the rows left out (their reasons).
struct MachineMeasurements {
  std::vector<Measurement> latest;
  std::vector<std::string> skipped;
};

/// The longest a command waits for a store another process holds: the
/// documented bound (docs/bench.md, "A store another process holds").
inline constexpr std::chrono::milliseconds kStorePatience{1500};

/// How long a call waits for a lock another process holds: up to `limit`,
/// and not a moment longer once a stop signal (sys::stop_signals) is
/// pending or `give_up` (when set) returns true. Once a wait stopped short
/// of the lock, the store is found locked for every Store opened with this
/// Patience or a copy (one command's reads share one): they wait no more.
struct Patience {
  std::chrono::milliseconds limit{kStorePatience};
  std::function<bool()> give_up;
  std::shared_ptr<std::atomic<bool>> locked = std::make_shared<std::atomic<bool>>(false);
  /// A call under it (or a copy) found the store locked: the opens after
  /// it try nothing (open_existing() gives nullptr and no error, open() the
  /// error), so that it is waited for and said once.
  bool found_locked() const { return *locked; }
};

class Store {
 public:
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  /// Opens the database, creating it (and its directory, 0700) and the
  /// schema when missing. Refuses (nullptr, the reason in *err) an unsafe
  /// directory or file (store/private_dir.h) and a schema newer than this
  /// gpuenv's, which it would otherwise downgrade. A store another process
  /// holds past `patience` is refused too: *err names it, "locked by
  /// another process".
  static std::unique_ptr<Store> open(const std::string& path, std::string* err, Patience patience = {});
  /// Opens an existing database only, for reading: nullptr and no error when
  /// the file is absent (sensing must not create files); the same checks of
  /// the directory and the file as open(). A WAL store that cannot be read
  /// as usual (on a read-only filesystem) is read as it is (immutable).
  /// After patience.found_locked(), nullptr and no error: nothing is tried.
  static std::unique_ptr<Store> open_existing(const std::string& path, std::string* err, Patience patience = {});

  /// What the opener should say once ("" when nothing): the store is on a
  /// network filesystem and uses a rollback journal (store/filesystem.h).
  const std::string& note() const { return note_; }

  /// Adds the run and its measurements in one transaction; the new run id in *id.
  bool add_run(const Run& run, const std::vector<Measurement>& ms, std::int64_t* id, std::string* err);
  /// The newest measurement of each (key, GPU, peer) on this machine. A row
  /// gpuenv would not have written (measurement_problem) is left out, and
  /// its reason named in `skipped`.
  bool latest(const std::string& fingerprint, MachineMeasurements* out, std::string* err);
  /// latest() of every machine that has run on this host (a driver update
  /// is another machine), by fingerprint: a command reads them while it
  /// senses, before it knows its own fingerprint (sense/measurements.h).
  bool latest_on_host(const std::string& hostname, std::map<std::string, MachineMeasurements>* out,
                      std::string* err);
  /// Whether any run was measured on another host (by name): then a machine
  /// latest_on_host() did not return may still have figures.
  bool ran_elsewhere(const std::string& hostname, bool* yes, std::string* err);
  /// Every measurement on this machine, oldest first; a row gpuenv would not
  /// have written is left out, and with `skipped` its reason added there.
  bool history(const std::string& fingerprint, std::vector<HistoryRow>* out, std::string* err,
               std::vector<std::string>* skipped = nullptr);
  /// Rows in the measurements table (all machines).
  bool count(std::int64_t* n, std::string* err);

  // Watched jobs of `gpuenv run` (store/jobs.cc). A store from before them
  // (schema 1) read with open_existing() has none.
  /// Adds the job (one rank) in one transaction; its id in *id.
  bool add_job(const Job& job, std::int64_t* id, std::string* err);
  /// The newest `limit` jobs, newest first. With `skipped`, a row that does
  /// not read (damaged, or out of range) is left out and its reason added
  /// there; without, it fails the call.
  bool recent_jobs(int limit, std::vector<Job>* out, std::string* err, std::vector<std::string>* skipped = nullptr);
  /// The job with this id; *out stays empty when there is none.
  bool job(std::int64_t id, std::optional<Job>* out, std::string* err);
  /// The first job whose command had this fingerprint and whose speed was
  /// measured (the baseline of report's speed-up); *out stays empty when none.
  bool first_job(const std::string& command_fp, std::optional<Job>* out, std::string* err);
  /// The newest job whose command had this fingerprint, preferring `rank`'s
  /// (nullopt: any rank); *out stays empty when none ran before.
  bool last_job(const std::string& command_fp, std::optional<int> rank, std::optional<Job>* out, std::string* err);

  // Tuning profiles of `gpuenv run --tune` (table tune_profiles, store/jobs.cc), one per
  // command fingerprint. A store from before them (schema 2) has none.
  /// The command's profile; *out stays empty when there is none.
  bool profile(const std::string& command_fp, std::optional<TuneProfile>* out, std::string* err);
  /// Writes (replaces) the profile of p.command_fp.
  bool put_profile(const TuneProfile& p, const std::string& updated_at, std::string* err);

  // Plans of `gpuenv plan-memory FLAGS -- CMD` (table memory_plans, store/jobs.cc), kept against
  // CMD's fingerprint, every one. A store from before them (schema 3) has none.
  /// Adds the plan.
  bool add_planned_peak(const PlannedPeak& p, std::string* err);
  /// The newest plan of the command made no later than `at` (RFC 3339 UTC,
  /// as utc_now() writes it: a job's start); *out stays empty when none. A
  /// plan gpuenv could not have written fails the call, naming it.
  bool planned_peak(const std::string& command_fp, const std::string& at, std::optional<PlannedPeak>* out,
                    std::string* err);

 private:
  Store(sqlite3* db, std::string path, Patience patience);
  static int busy(void* store, int attempt);
  static std::unique_ptr<Store> open_immutable(const std::string& path, const Patience& patience, std::string* err);
  int first_read();
  bool patient();
  std::string note_;
  bool exec(const char* sql, std::string* err, int* rc = nullptr);
  bool init(std::string* err);
  bool known_version(std::string* err);
  bool insert(const Run& run, const std::vector<Measurement>& ms, std::int64_t* id, std::string* err);
  // Each row of `sql` (its ?1 bound to `arg`) to `each`, with the reason
  // gpuenv would not have written it ("" when it would).
  bool query(const char* sql, const std::string& arg,
             const std::function<void(HistoryRow, std::string skipped)>& each, std::string* err);
  bool latest_of(const char* machines, const std::string& arg, std::map<std::string, MachineMeasurements>* out,
                 std::string* err);
  bool has_jobs_table(bool* yes, std::string* err);
  bool has_table(const char* name, bool* yes, std::string* err);
  bool jobs_have_column(const char* name, bool* yes, std::string* err);
  bool migrate(std::string* err);
  bool query_jobs(const std::string& where, const std::vector<std::string>& args, std::vector<Job>* out,
                  std::string* err, std::vector<std::string>* skipped = nullptr);
  sqlite3* db_;
  std::string path_;
  Patience patience_;
  std::chrono::steady_clock::time_point busy_since_;
};

}  // namespace gpuenv::store
