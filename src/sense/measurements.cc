#include "sense/measurements.h"

#include "sense/host/node_name.h"
#include "store/fingerprint.h"

namespace gpuenv {

ReadStore read_measurement_store(const std::string& db_path, const store::Patience& patience) {
  ReadStore s{db_path, patience, false, {}, nullptr, ""};
  s.db = store::Store::open_existing(db_path, &s.err, patience);
  std::string host = host_name();
  bool elsewhere = true;
  s.read = s.db && s.db->latest_on_host(host, &s.machines, &s.err) && s.db->ran_elsewhere(host, &elsewhere, &s.err);
  if (!s.read || !elsewhere) s.db.reset();  // closed here, beside NVML, when nothing is left to ask
  return s;
}

void sense_measurements(const std::string& db_path, Machine* m, const store::Patience& patience) {
  sense_measurements(read_measurement_store(db_path, patience), m);
}

void sense_measurements(ReadStore s, Machine* m) {
  const std::string& db_path = s.path;
  std::string& err = s.err;
  if (s.read) {
    std::string fingerprint = store::fingerprint(*m);
    store::MachineMeasurements mine;
    if (auto read = s.machines.find(fingerprint); read != s.machines.end()) mine = std::move(read->second);
    else if (s.db) s.read = s.db->latest(fingerprint, &mine, &err);
    if (s.read) {
      m->measurements = std::move(mine.latest);
      for (const auto& why : mine.skipped)
        m->host.problems.push_back({"store", "store_value_dropped", why + ": left out", "gpuenv bench measures it again"});
      return;
    }
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
