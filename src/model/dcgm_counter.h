// One line of a dcgm-exporter counters CSV (`export -f FILE`, dcgm-exporter's
// -f/--collectors): a DCGM field to serve, the Prometheus type and the help
// text to serve it with. Plain data; decide/export/counters_csv.h parses the file.
#pragma once

#include <string>

namespace gpuenv {

struct DcgmCounter {
  std::string field;  // DCGM_FI_DEV_GPU_TEMP, DCGM_EXP_XID_ERRORS_COUNT, ...
  std::string type;   // gauge, counter, histogram, summary or label, as written
  std::string help;
  int line = 0;       // in the file, from 1
};

}  // namespace gpuenv
