// libFuzzer: any text as the device plugin's config file either parses, with
// every replicated resource named and replicated at least once and a MIG
// strategy GFD knows, or fails with a message; it never crashes or recurses
// as deep as the file is long.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "decide/labels/device_plugin_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  gpuenv::DevicePluginConfig c;
  std::string err;
  if (!gpuenv::parse_device_plugin_config(text, &c, &err)) {
    if (err.empty()) std::abort();
    return 0;
  }
  if (c.mig_strategy && *c.mig_strategy != "none" && *c.mig_strategy != "single" && *c.mig_strategy != "mixed")
    std::abort();
  auto check = [](const std::vector<gpuenv::ReplicatedResource>& rs) {
    for (const auto& r : rs)
      if (r.replicas < 1) std::abort();
  };
  check(c.time_slicing);
  if (c.mps) check(*c.mps);
  std::string s = gpuenv::sharing_strategy(c);
  if (s != "none" && s != "mps" && s != "time-slicing") std::abort();
  return 0;
}
