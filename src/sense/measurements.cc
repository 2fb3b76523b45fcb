#include "sense/measurements.h"

#include "store/fingerprint.h"
#include "store/store.h"

namespace gpuenv {

void sense_measurements(const std::string& db_path, Machine* m) {
  std::string err;
  auto db = store::Store::open_existing(db_path, &err);
  std::vector<Measurement> latest;
  std::vector<std::string> skipped;
  if (db && db->latest(store::fingerprint(*m), &latest, &err, &skipped)) {
    m->measurements = std::move(latest);
    for (const auto& why : skipped)
      m->host.problems.push_back({"store", "store_value_dropped", why + ": left out", "gpuenv bench measures it again"});
    return;
  }
  if (err.empty()) return;  // never measured here
  m->host.problems.push_back({"store", "store_unreadable", "cannot read the measurement store: " + err,
                              "move the file aside (gpuenv bench then starts a new one), or point --cache-root (GPUENV_CACHE_ROOT) "
                              "elsewhere"});
}

}  // namespace gpuenv
