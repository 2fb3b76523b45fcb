// libFuzzer: any bytes either fail to parse with a message, or parse into a
// Machine that serializes and parses back to itself.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "model/snapshot.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  gpuenv::Machine first;
  std::string err;
  if (!gpuenv::machine_from_json(text, &first, &err)) {
    if (err.empty()) std::abort();  // every failure says why
    return 0;
  }
  std::string written = gpuenv::machine_to_json(first);
  gpuenv::Machine second;
  if (!gpuenv::machine_from_json(written, &second, &err)) {
    std::fprintf(stderr, "re-parse failed: %s\n%s\n", err.c_str(), written.c_str());
    std::abort();
  }
  if (!(first == second)) {
    std::fprintf(stderr, "round trip changed the machine:\n%s\n", written.c_str());
    std::abort();
  }
  if (gpuenv::machine_to_json(second) != written) std::abort();  // writing is deterministic
  return 0;
}
