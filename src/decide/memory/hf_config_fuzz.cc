// libFuzzer: any bytes either fail to parse as a config.json with a message,
// or give a shape that passes validation and whose estimate is finite.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "decide/memory/estimate.h"
#include "decide/memory/training.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuenv::memory;
  std::string text(reinterpret_cast<const char*>(data), size);
  Training t;
  std::string err;
  if (!shape_from_hf_config(text, &t.model, &err)) {
    if (err.empty()) std::abort();  // every failure says why
    return 0;
  }
  if (!shape_problem(t.model, true).empty()) std::abort();  // parsed means valid
  t.seq = t.model.positions ? t.model.positions : 128;
  t.batch = 1;
  if (!training_problem(t, true).empty()) std::abort();
  double peak = estimate(t, {}).peak_bytes();
  if (!std::isfinite(peak) || peak <= 0) std::abort();
  return 0;
}
