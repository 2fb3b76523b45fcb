#include "sense/measurements.h"

#include <cstdlib>

#include "store/fingerprint.h"
#include "store/store.h"

namespace gpuenv {

void sense_measurements(const std::string& db_path, Machine* m) {
  std::string path = db_path.empty() ? store::default_path(std::getenv) : db_path;
  std::string err;
  auto db = store::Store::open_existing(path, &err);
  std::vector<Measurement> latest;
  if (db && db->latest(store::fingerprint(*m), &latest, &err)) {
    m->measurements = std::move(latest);
    return;
  }
  if (err.empty()) return;  // never measured here
  m->host.problems.push_back({"store", "store_unreadable", "cannot read the measurement store: " + err,
                              "move the file aside (gpuenv bench then starts a new one) or set GPUENV_CACHE_DIR"});
}

}  // namespace gpuenv
