// What store.cc and jobs.cc share of SQLite: a prepared statement that
// finalizes itself, and reading a text column. Internal to store/.
#pragma once

#include <sqlite3.h>

#include <optional>
#include <string>

namespace gpuenv::store {

/// A store (`what`: its path) that another process held past the patience.
inline std::string locked_error(const std::string& what) {
  return what + ": locked by another process (database is locked)";
}

inline std::string sqlite_error(sqlite3* db, const std::string& what) {
  if (db && (sqlite3_errcode(db) & 0xff) == SQLITE_BUSY) return locked_error(what);
  return what + ": " + (db ? sqlite3_errmsg(db) : "out of memory");
}

/// A prepared statement, finalized when destroyed.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &s_, nullptr); }
  ~Stmt() { sqlite3_finalize(s_); }
  bool ok() const { return rc_ == SQLITE_OK; }
  sqlite3_stmt* get() const { return s_; }
  void text(int i, const std::string& v) { sqlite3_bind_text(s_, i, v.c_str(), -1, SQLITE_TRANSIENT); }
  void text(int i, const std::optional<std::string>& v) { v ? text(i, *v) : (void)sqlite3_bind_null(s_, i); }
  void real(int i, const std::optional<double>& v) {
    v ? (void)sqlite3_bind_double(s_, i, *v) : (void)sqlite3_bind_null(s_, i);
  }
  void boolean(int i, const std::optional<bool>& v) {
    v ? (void)sqlite3_bind_int(s_, i, *v ? 1 : 0) : (void)sqlite3_bind_null(s_, i);
  }
  int step() { return sqlite3_step(s_); }

 private:
  sqlite3_stmt* s_ = nullptr;
  int rc_;
};

inline std::string column_text(sqlite3_stmt* s, int i) {
  const unsigned char* t = sqlite3_column_text(s, i);
  return t ? reinterpret_cast<const char*>(t) : "";
}

}  // namespace gpuenv::store
