#include "sense/measurements.h"

#include "store/fingerprint.h"

namespace gpuenv {

void sense_measurements(const std::string& db_path, Machine* m, const store::Patience& patience) {
  std::string err;
  auto db = store::Store::open_existing(db_path, &err, patience);
  std::vector<Measurement> latest;
  std::vector<std::string> skipped;
  if (db && db->latest(store::fingerprint(*m), &latest, &err, &skipped)) {
    m->measurements = std::move(latest);
    for (const auto& why : skipped)
      m->host.problems.push_back({"store", "store_value_dropped", why + ": left out", "gpuenv bench measures it again"});
    return;
  }
  if (err.empty()) return;  // never measured here (or found locked before: said then)
  if (patience.found_locked()) {
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
