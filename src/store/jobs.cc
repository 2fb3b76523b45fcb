// The jobs table: one row per watched rank, and the memory plans made for
// their commands (schema in store.cc).
#include <nlohmann/json.hpp>

#include <algorithm>

#include "model/job_json.h"
#include "model/json_text.h"
#include "model/launch.h"
#include "model/tune_profile.h"
#include "store/sqlite_stmt.h"
#include "store/store.h"

namespace gpuenv::store {
namespace {

using nlohmann::json;

constexpr const char* kColumns =
    "SELECT id, started_at, duration_s, exit_code, argv, cwd, command_fp, script_path, script_fp, machine_fp, "
    "plan, rank, local_rank, hostname, gpuenv_version, context, timeline, ";
// A version-2 store read without writing (open_existing) has no speed or tuned,
// a version-3 store no peak memory, a version-4 store no verdict.
constexpr const char* kSpeedColumns = "speed, tuned, ";
constexpr const char* kNoSpeedColumns = "NULL, '', ";
constexpr const char* kPeakColumns = "peak_memory_bytes, peak_memory_source, ";
constexpr const char* kNoPeakColumns = "NULL, NULL, ";
constexpr const char* kVerdictColumns = "verdict, verdict_evidence, verdict_fix FROM jobs ";
constexpr const char* kNoVerdictColumns = "NULL, NULL, NULL FROM jobs ";

void bind_int(Stmt* s, int i, const std::optional<int>& v) {
  v ? (void)sqlite3_bind_int(s->get(), i, *v) : (void)sqlite3_bind_null(s->get(), i);
}

// An integer column in [lo, hi], as gpuenv writes it; NULL reads as nullopt.
// Out of range (or not an integer): false with "job 7: exit_code ... is out
// of range (0 to 255)" in *err. Read whole: sqlite3_column_int would cut
// INT64_MIN to 0.
bool column_in(sqlite3_stmt* s, int i, std::int64_t lo, std::int64_t hi, const std::string& where,
               std::optional<int>* out, std::string* err) {
  int type = sqlite3_column_type(s, i);
  if (type == SQLITE_NULL) return *out = std::nullopt, true;
  std::string name = sqlite3_column_name(s, i);
  if (type != SQLITE_INTEGER) return *err = where + name + " is not an integer", false;
  std::int64_t v = sqlite3_column_int64(s, i);
  if (v < lo || v > hi)
    return *err = where + name + " " + std::to_string(v) + " is out of range (" + std::to_string(lo) + " to " +
                  std::to_string(hi) + ")",
           false;
  *out = int(v);
  return true;
}

// The columns gpuenv writes as integers: the exit status (0-255: 128 + the
// signal for a signalled job, 126/127 for one never started) and the ranks
// (launcher counts, model/launch.h).
bool read_integers(sqlite3_stmt* s, Job* j, const std::string& where, std::string* err) {
  std::optional<int> exit;
  if (!column_in(s, 3, 0, kMaxExitStatus, where, &exit, err) ||
      !column_in(s, 11, 0, kMaxLaunchCount, where, &j->rank, err) ||
      !column_in(s, 12, 0, kMaxLaunchCount, where, &j->local_rank, err))
    return false;
  if (!exit) return *err = where + "exit_code is NULL", false;
  j->exit_code = *exit;
  return true;
}

// The measured peak (columns 19 and 20): both NULL, or bytes in range and a
// source gpuenv names.
bool read_peak(sqlite3_stmt* s, Job* j, const std::string& where, std::string* err) {
  int type = sqlite3_column_type(s, 19);  // before any conversion
  if (type == SQLITE_NULL && sqlite3_column_type(s, 20) == SQLITE_NULL) return true;
  if (type == SQLITE_NULL) return *err = where + "peak_memory_source without peak_memory_bytes", false;
  if (type != SQLITE_INTEGER) return *err = where + "peak_memory_bytes is not an integer", false;
  std::int64_t bytes = sqlite3_column_int64(s, 19);
  std::string source = column_text(s, 20);
  if (bytes < 0 || bytes > kMaxPeakMemoryBytes)
    return *err = where + "peak_memory_bytes " + std::to_string(bytes) + " is out of range (0 to 2^50)", false;
  if (source != "torch" && source != "nvml")
    return *err = where + "peak_memory_source is " + json_line(json(source)) + ", not torch or nvml", false;
  j->peak_memory = JobPeakMemory{bytes, source};
  return true;
}

// A row back into a Job; a row whose JSON does not read (written by hand, or
// damaged) names its id and column in *err.
bool read_job(sqlite3_stmt* s, Job* j, std::string* err) {
  j->id = sqlite3_column_int64(s, 0);
  j->started_at = column_text(s, 1);
  j->duration_s = sqlite3_column_double(s, 2);
  j->cwd = column_text(s, 5), j->command_fp = column_text(s, 6);
  j->script_path = column_text(s, 7), j->script_fp = column_text(s, 8), j->machine_fp = column_text(s, 9);
  j->plan_json = column_text(s, 10);
  j->hostname = column_text(s, 13), j->gpuenv_version = column_text(s, 14);
  std::string where = "job " + std::to_string(j->id) + ": ";
  if (!read_integers(s, j, where, err)) return false;
  if (!(j->duration_s >= 0 && j->duration_s <= kMaxJobSeconds))
    return *err = where + "duration_s " + json(j->duration_s).dump() + " is out of range (0 to 1e9 s)", false;
  json argv = json::parse(column_text(s, 4), nullptr, false);
  if (!argv.is_array()) return *err = where + "argv is not a JSON array", false;
  for (const auto& a : argv) {
    if (!a.is_string()) return *err = where + "argv holds a non-string", false;
    j->argv.push_back(a.get<std::string>());
  }
  json context = json::parse(column_text(s, 15), nullptr, false);
  json timeline = json::parse(column_text(s, 16), nullptr, false);
  std::string why;
  if (!context_from_json(context, &j->context, &why) || !timeline_from_json(timeline, &j->timeline, &why))
    return *err = where + why, false;
  j->tuned = column_text(s, 18);
  if (std::string bad = tune_settings_problem(j->tuned); !bad.empty()) return *err = where + "tuned: " + bad, false;
  if (!read_peak(s, j, where, err)) return false;
  if (sqlite3_column_type(s, 21) != SQLITE_NULL)
    j->verdict = JobVerdict{column_text(s, 21), column_text(s, 22), column_text(s, 23)};
  if (sqlite3_column_type(s, 17) == SQLITE_NULL) return true;
  json speed = json::parse(column_text(s, 17), nullptr, false);
  JobSpeed sp;
  if (!speed_from_json(speed, &sp, &why)) return *err = where + why, false;
  j->speed = sp;
  return true;
}

}  // namespace

bool Store::has_table(const char* name, bool* yes, std::string* err) {
  Stmt s(db_, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?1");
  if (!s.ok()) return *err = sqlite_error(db_, path_), false;
  s.text(1, std::string(name));
  if (s.step() != SQLITE_ROW) return *err = sqlite_error(db_, path_), false;
  *yes = sqlite3_column_int(s.get(), 0) > 0;
  return true;
}

bool Store::has_jobs_table(bool* yes, std::string* err) { return has_table("jobs", yes, err); }

bool Store::jobs_have_column(const char* name, bool* yes, std::string* err) {
  Stmt s(db_, "SELECT COUNT(*) FROM pragma_table_info('jobs') WHERE name = ?1");
  if (!s.ok()) return *err = sqlite_error(db_, path_), false;
  s.text(1, std::string(name));
  if (s.step() != SQLITE_ROW) return *err = sqlite_error(db_, path_), false;
  *yes = sqlite3_column_int(s.get(), 0) > 0;
  return true;
}

bool Store::add_job(const Job& job, std::int64_t* id, std::string* err) {
  Stmt s(db_,
         "INSERT INTO jobs(started_at, duration_s, exit_code, argv, cwd, command_fp, script_path, script_fp, "
         "machine_fp, plan, rank, local_rank, hostname, gpuenv_version, context, timeline, speed, tuned, "
         "peak_memory_bytes, peak_memory_source, verdict, verdict_evidence, verdict_fix) "
         "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, "
         "?23)");
  if (!s.ok()) return *err = sqlite_error(db_, path_), false;
  s.text(1, job.started_at), s.real(2, job.duration_s);
  sqlite3_bind_int(s.get(), 3, job.exit_code);
  // JSON of outside text (argv, paths): replace invalid UTF-8 instead of throwing.
  s.text(4, json_line(json(job.argv))), s.text(5, job.cwd), s.text(6, job.command_fp);
  s.text(7, job.script_path), s.text(8, job.script_fp), s.text(9, job.machine_fp), s.text(10, job.plan_json);
  bind_int(&s, 11, job.rank), bind_int(&s, 12, job.local_rank);
  s.text(13, job.hostname), s.text(14, job.gpuenv_version);
  s.text(15, json_line(context_to_json(job.context))), s.text(16, json_line(timeline_to_json(job.timeline)));
  if (job.speed) s.text(17, json_line(speed_to_json(*job.speed)));
  else sqlite3_bind_null(s.get(), 17);
  s.text(18, job.tuned);
  if (job.peak_memory) {
    sqlite3_bind_int64(s.get(), 19, job.peak_memory->bytes);
    s.text(20, job.peak_memory->source);
  } else {
    sqlite3_bind_null(s.get(), 19), sqlite3_bind_null(s.get(), 20);
  }
  if (job.verdict) s.text(21, job.verdict->name), s.text(22, job.verdict->evidence), s.text(23, job.verdict->fix);
  else sqlite3_bind_null(s.get(), 21), sqlite3_bind_null(s.get(), 22), sqlite3_bind_null(s.get(), 23);
  if (!exec("BEGIN IMMEDIATE", err)) return false;
  if (s.step() != SQLITE_DONE) {
    *err = sqlite_error(db_, path_ + ": jobs");
    std::string ignored;
    exec("ROLLBACK", &ignored);
    return false;
  }
  *id = sqlite3_last_insert_rowid(db_);
  return exec("COMMIT", err);
}

bool Store::query_jobs(const std::string& where, const std::vector<std::string>& args, std::vector<Job>* out,
                       std::string* err, std::vector<std::string>* skipped) {
  bool table = false;
  if (!has_jobs_table(&table, err)) return false;
  if (!table) return true;
  bool speed = false, peak = false, verdict = false;
  if (!jobs_have_column("speed", &speed, err) || !jobs_have_column("peak_memory_bytes", &peak, err) ||
      !jobs_have_column("verdict", &verdict, err))
    return false;
  std::string sql = std::string(kColumns) + (speed ? kSpeedColumns : kNoSpeedColumns) +
                    (peak ? kPeakColumns : kNoPeakColumns) + (verdict ? kVerdictColumns : kNoVerdictColumns) + where;
  Stmt s(db_, sql.c_str());
  if (!s.ok()) return *err = sqlite_error(db_, path_), false;
  for (std::size_t i = 0; i < args.size(); ++i) s.text(int(i) + 1, args[i]);
  int rc;
  while ((rc = s.step()) == SQLITE_ROW) {
    Job j;
    std::string why;
    if (read_job(s.get(), &j, &why)) out->push_back(std::move(j));
    else if (skipped) skipped->push_back(path_ + ": " + why);
    else return *err = path_ + ": " + why, false;
  }
  if (rc != SQLITE_DONE) return *err = sqlite_error(db_, path_), false;
  return true;
}

bool Store::recent_jobs(int limit, std::vector<Job>* out, std::string* err, std::vector<std::string>* skipped) {
  return query_jobs("ORDER BY id DESC LIMIT " + std::to_string(std::max(0, limit)), {}, out, err, skipped);
}

bool Store::job(std::int64_t id, std::optional<Job>* out, std::string* err) {
  std::vector<Job> jobs;
  if (!query_jobs("WHERE id = " + std::to_string(id), {}, &jobs, err)) return false;
  if (!jobs.empty()) *out = std::move(jobs[0]);
  return true;
}

bool Store::first_job(const std::string& command_fp, std::optional<Job>* out, std::string* err) {
  std::vector<Job> jobs;
  bool table = false, speed = false;
  if (!has_jobs_table(&table, err) || (table && !jobs_have_column("speed", &speed, err))) return false;
  if (!speed) return true;
  if (!query_jobs("WHERE command_fp = ?1 AND speed IS NOT NULL ORDER BY id LIMIT 1", {command_fp}, &jobs, err))
    return false;
  if (!jobs.empty()) *out = std::move(jobs[0]);
  return true;
}

bool Store::last_job(const std::string& command_fp, std::optional<int> rank, std::optional<Job>* out,
                     std::string* err) {
  std::vector<Job> jobs;
  std::string r = rank ? std::to_string(*rank) : "";
  if (!query_jobs("WHERE command_fp = ?1 ORDER BY (IFNULL(rank, -1) = CAST(?2 AS INTEGER) AND ?2 != '') DESC, "
                  "id DESC LIMIT 1",
                  {command_fp, r}, &jobs, err))
    return false;
  if (!jobs.empty()) *out = std::move(jobs[0]);
  return true;
}

bool Store::profile(const std::string& command_fp, std::optional<TuneProfile>* out, std::string* err) {
  bool table = false;
  if (!has_table("tune_profiles", &table, err)) return false;
  if (!table) return true;
  Stmt s(db_, "SELECT profile FROM tune_profiles WHERE command_fp = ?1");
  if (!s.ok()) return *err = sqlite_error(db_, path_), false;
  s.text(1, command_fp);
  int rc = s.step();
  if (rc == SQLITE_DONE) return true;
  if (rc != SQLITE_ROW) return *err = sqlite_error(db_, path_), false;
  TuneProfile p;
  std::string why;
  if (!profile_from_json(json::parse(column_text(s.get(), 0), nullptr, false), &p, &why))
    return *err = path_ + ": the tuning profile of " + command_fp + ": " + why, false;
  *out = std::move(p);
  return true;
}

bool Store::put_profile(const TuneProfile& p, const std::string& updated_at, std::string* err) {
  Stmt s(db_, "INSERT OR REPLACE INTO tune_profiles(command_fp, profile, updated_at) VALUES(?1, ?2, ?3)");
  if (!s.ok()) return *err = sqlite_error(db_, path_), false;
  s.text(1, p.command_fp);
  s.text(2, json_line(profile_to_json(p)));
  s.text(3, updated_at);
  if (s.step() != SQLITE_DONE) return *err = sqlite_error(db_, path_ + ": tune_profiles"), false;
  return true;
}

bool Store::add_planned_peak(const PlannedPeak& p, std::string* err) {
  Stmt s(db_, "INSERT INTO memory_plans(command_fp, planned_at, peak_bytes, gpu, flags) VALUES(?1, ?2, ?3, ?4, ?5)");
  if (!s.ok()) return *err = sqlite_error(db_, path_), false;
  s.text(1, p.command_fp), s.text(2, p.planned_at), s.real(3, p.peak_bytes), s.text(4, p.gpu), s.text(5, p.flags);
  if (s.step() != SQLITE_DONE) return *err = sqlite_error(db_, path_ + ": memory_plans"), false;
  return true;
}

bool Store::planned_peak(const std::string& command_fp, const std::string& at, std::optional<PlannedPeak>* out,
                         std::string* err) {
  bool table = false;
  if (!has_table("memory_plans", &table, err)) return false;
  if (!table) return true;
  Stmt s(db_,
         "SELECT id, planned_at, peak_bytes, gpu, flags FROM memory_plans WHERE command_fp = ?1 AND planned_at <= ?2 "
         "ORDER BY id DESC LIMIT 1");
  if (!s.ok()) return *err = sqlite_error(db_, path_), false;
  s.text(1, command_fp), s.text(2, at);
  int rc = s.step();
  if (rc == SQLITE_DONE) return true;
  if (rc != SQLITE_ROW) return *err = sqlite_error(db_, path_), false;
  int type = sqlite3_column_type(s.get(), 2);  // before any conversion
  PlannedPeak p{command_fp, sqlite3_column_double(s.get(), 2), column_text(s.get(), 3), column_text(s.get(), 4),
                column_text(s.get(), 1)};
  bool number = type == SQLITE_FLOAT || type == SQLITE_INTEGER;
  if (!number || !(p.peak_bytes > 0 && p.peak_bytes <= kMaxPlannedPeakBytes))
    return *err = path_ + ": memory plan " + std::to_string(sqlite3_column_int64(s.get(), 0)) +
                  ": peak_bytes is out of range (above 0, up to 4 EiB)",
           false;
  *out = std::move(p);
  return true;
}

}  // namespace gpuenv::store
