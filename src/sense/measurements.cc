#include "sense/measurements.h"

#include "store/fingerprint.h"

namespace gpuenv {

ReadStore read_measurement_store(const std::string& db_path, const store::Patience& patience) {
  ReadStore s{db_path, patience, false, {}, ""};
  if (auto db = store::Store::open_existing(db_path, &s.err, patience))
    s.read = db->latest_by_machine(&s.machines, &s.err);
  return s;
}

void sense_measurements(const std::string& db_path, Machine* m, const store::Patience& patience) {
  sense_measurements(read_measurement_store(db_path, patience), m);
}

void sense_measurements(ReadStore s, Machine* m) {
  const std::string& db_path = s.path;
  std::string& err = s.err;
  if (s.read) {
    auto mine = s.machines.find(store::fingerprint(*m));
    if (mine == s.machines.end()) return;  // never measured here
    m->measurements = std::move(mine->second.latest);
    for (const auto& why : mine->second.skipped)
      m->host.problems.push_back({"store", "store_value_dropped", why + ": left out", "gpuenv bench measures it again"});
    return;
  }
  if (err.empty()) return;  // never measured here (or found locked before: said then)
  if (s.patience.found_locked()) {
    m->host.problems.push_back({"store", kStoreLocked,
                                "the measurement store " + db_path +
                                    " is locked by another process: going on without its measurements",
                                "nothing, when it passes (another gpuenv bench, check or run writing); `fuser " +
                                    db_path + "` names the process that holds it"});
    return;
  }
  m->host.problems.push_back({"store", "store_unreadable", "cannot read the measurement store: " + err,
                              "move the file aside (gpuenv bench then starts a new one), or point --cache-root (GPUENV_CACHE_ROOT) "
                              "elsewhere"});
}

}  // namespace gpuenv
