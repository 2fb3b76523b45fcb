// Helpers for the table-driven rule tests: Options as the CLI builds them,
// and exact comparison of what one rule decided.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "builders.h"
#include "model/machine.h"
#include "model/plan.h"

namespace gpuenv::testing {

using Env = std::map<std::string, std::string>;

/// Options whose environment is the machine's recorded one with `extra` on top.
inline Options options_for(const Machine& m, const Env& extra = {}) {
  Options o;
  o.env = m.env;
  for (const auto& [k, v] : extra) o.env[k] = v;
  return o;
}

/// name -> value of every setting; fails on a duplicate name, an empty or
/// multi-line reason.
inline Env settings_of(const Decision& d) {
  Env out;
  for (const auto& s : d.settings) {
    EXPECT_TRUE(out.emplace(s.name, s.value).second) << "set twice: " << s.name;
    EXPECT_FALSE(s.reason.empty()) << s.name;
    EXPECT_EQ(s.reason.find('\n'), std::string::npos) << s.name << ": " << s.reason;
  }
  return out;
}

/// A one-GPU machine of a model the builders lack (GB10, Thor, B300, ...).
inline Machine one_gpu(const std::string& name, ComputeCapability cc) {
  GpuModel model{name, cc, 64ull << 30, 5, 16, 300000, 2000, 3000, 0};
  return MachineBuilder().cpus(1, 16).gpus(model).build();
}

/// `m` with GPU `index`'s compute capability unknown, as when it was not sensed.
inline Machine without_cc(Machine m, int index = 0) {
  m.gpus.at(index).compute_capability.reset();
  return m;
}

inline const Setting* find_setting(const Decision& d, const std::string& name) {
  for (const auto& s : d.settings)
    if (s.name == name) return &s;
  return nullptr;
}

/// Exactly one note per expected fragment, in order, each containing it.
inline void expect_notes(const Decision& d, const std::vector<std::string>& fragments) {
  ASSERT_EQ(d.notes.size(), fragments.size());
  for (size_t i = 0; i < fragments.size(); ++i)
    EXPECT_NE(d.notes[i].message.find(fragments[i]), std::string::npos)
        << "note " << i << ": " << d.notes[i].message << "\nexpected to contain: " << fragments[i];
}

}  // namespace gpuenv::testing
