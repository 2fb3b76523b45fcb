// The stored measurements of this machine, read while sensing so that the
// plan sees them through Machine::measurements (decide/rules/rule_measured.cc).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "model/machine.h"
#include "store/store.h"

namespace gpuenv {

/// The Problem code of a store another process held past the patience:
/// sensing went on without its measurements (optional, as the GPUs' health
/// is). The command says so once on stderr and keeps it out of the Machine
/// (cli/context.h).
inline constexpr const char* kStoreLocked = "store_locked";

/// Fills m->measurements with the newest stored figure of each case for
/// m's fingerprint (store/fingerprint.h). Needs m's GPUs and driver sensed
/// first. A missing database is no problem; an unreadable one adds a
/// Problem to m->host.problems, as does a store that another user could
/// have planted (store/private_dir.h), and one locked past `patience`
/// (kStoreLocked). `db_path` "" reads none.
void sense_measurements(const std::string& db_path, Machine* m, const store::Patience& patience = {});

/// The store read ahead, beside NVML's queries (opening SQLite and the
/// query cost about 1.5 ms, and the query needs the machine's fingerprint,
/// which needs the GPUs sensed): the newest measurements of every machine
/// that has run on this host. `db` stays open only when other hosts' runs
/// are there too (a shared home, or this host's earlier name: a container's),
/// to ask for this machine once its fingerprint is known. `read` false when
/// there is no store (`err` "") or it could not be read (`err`).
struct ReadStore {
  std::string path;
  store::Patience patience;
  bool read = false;
  std::map<std::string, store::MachineMeasurements> machines;  // this host's, by fingerprint
  std::unique_ptr<store::Store> db;
  std::string err;
};
ReadStore read_measurement_store(const std::string& db_path, const store::Patience& patience = {});
/// sense_measurements over a store read by read_measurement_store: m's own.
void sense_measurements(ReadStore store, Machine* m);

}  // namespace gpuenv
