// The popular models' config.json numbers, for `plan-memory --model NAME`: one
// table, each row with the Hub repository its numbers were read from. A
// preset is planned exactly as --config with that file would be.
#pragma once

#include <string>
#include <vector>

namespace gpuenv::memory {

struct Preset {
  const char* name;    // the Hub repository, e.g. "meta-llama/Llama-3.2-1B"
  const char* config;  // the config.json fields that shape memory
};

/// The preset whose name (or the part after the "/") matches `name`, case
/// ignored; nullptr when none does.
const Preset* find_preset(const std::string& name);

/// Every preset, in table order.
const std::vector<Preset>& presets();

}  // namespace gpuenv::memory
