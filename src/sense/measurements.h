// The stored measurements of this machine, read while sensing so that the
// plan sees them through Machine::measurements (decide/rules/rule_measured.cc).
#pragma once

#include <string>

#include "model/machine.h"

namespace gpuenv {

/// Fills m->measurements with the newest stored figure of each case for
/// m's fingerprint (store/fingerprint.h). Needs m's GPUs and driver sensed
/// first. A missing database is no problem; an unreadable one adds a
/// Problem to m->host.problems, as does a store that another user could
/// have planted (store/private_dir.h). `db_path` "" reads none.
void sense_measurements(const std::string& db_path, Machine* m);

}  // namespace gpuenv
