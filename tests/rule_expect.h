// Table rows for rule tests: a machine, the environment, and exactly what the
// rule must decide. Settings are compared as a whole name -> value map, so a
// row fails on a missing setting, a wrong value, and an unexpected one; notes
// as a whole list, each with its severity. Every rule test uses this file.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "builders.h"
#include "model/machine.h"
#include "model/plan.h"

namespace gpuenv::testing {

using Env = std::map<std::string, std::string>;

// The severities a rule's table expects, short enough for a row.
constexpr Severity kInfo = Severity::kInfo, kWarn = Severity::kWarning;

struct ExpectedNote {
  Severity severity;
  std::string contains;  // a part of the message
};

struct RuleCase {
  std::string description;
  Machine machine;
  std::map<std::string, std::string> env;       // Options::env
  std::map<std::string, std::string> settings;  // exactly these, nothing else
  std::vector<ExpectedNote> notes = {};         // exactly these, in order
  std::optional<std::vector<int>> binding = {};
  std::map<std::string, std::string> reasons = {};  // name -> part of its reason
  std::string cache_root = "/cache";                // Options::cache_root
  bool ptx = false;                                 // Options::ptx
};

/// Options as the CLI builds them: the machine's recorded environment with
/// `extra` (the live one) on top, and the cache root /cache.
inline Options options_for(const Machine& m, const Env& extra = {}) {
  Options o;
  o.cache_root = "/cache";
  o.env = m.env;
  for (const auto& [k, v] : extra) o.env[k] = v;
  return o;
}

/// Options with only `env`, for a rule called without a machine's record.
inline Options options_with(const Env& env) { return options_for(Machine{}, env); }

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

inline std::string describe(const std::vector<Note>& notes) {
  std::string out;
  for (const auto& n : notes)
    out += "\n  [" + std::to_string(static_cast<int>(n.severity)) + "] " + n.message;
  return out;
}

inline void expect_settings(const Decision& d, const RuleCase& c) {
  std::map<std::string, std::string> got;
  for (const auto& s : d.settings) {
    EXPECT_TRUE(got.emplace(s.name, s.value).second) << "set twice: " << s.name;
    EXPECT_FALSE(s.reason.empty()) << s.name;
    EXPECT_EQ(s.reason.find('\n'), std::string::npos) << s.name << ": " << s.reason;
    EXPECT_EQ(s.origin, Origin::kDecided) << s.name;
  }
  EXPECT_EQ(got, c.settings);
  for (const auto& [name, part] : c.reasons) {
    for (const auto& s : d.settings) {
      if (s.name == name) {
        EXPECT_NE(s.reason.find(part), std::string::npos) << name << ": " << s.reason;
      }
    }
  }
}

inline void expect_notes(const Decision& d, const RuleCase& c) {
  ASSERT_EQ(d.notes.size(), c.notes.size()) << describe(d.notes);
  for (size_t i = 0; i < c.notes.size(); ++i) {
    EXPECT_EQ(d.notes[i].severity, c.notes[i].severity) << d.notes[i].message;
    EXPECT_NE(d.notes[i].message.find(c.notes[i].contains), std::string::npos)
        << "note " << i << " lacks \"" << c.notes[i].contains << "\":" << describe(d.notes);
  }
}

inline void expect_binding(const Decision& d, const RuleCase& c) {
  ASSERT_EQ(d.binding.has_value(), c.binding.has_value());
  if (!d.binding) return;
  EXPECT_EQ(d.binding->cpus, *c.binding);
  EXPECT_FALSE(d.binding->reason.empty());
}

/// Runs `rule` over every row, naming the row on failure.
inline void run_table(Decision (*rule)(const Machine&, const Options&), const std::vector<RuleCase>& rows) {
  for (const auto& row : rows) {
    SCOPED_TRACE(row.description);
    Options o = options_for(row.machine, row.env);
    o.cache_root = row.cache_root;
    o.ptx = row.ptx;
    Decision d = rule(row.machine, o);
    expect_settings(d, row);
    expect_notes(d, row);
    expect_binding(d, row);
  }
}

inline std::vector<int> cpu_range(int first, int count) {
  std::vector<int> v;
  for (int i = 0; i < count; ++i) v.push_back(first + i);
  return v;
}

}  // namespace gpuenv::testing
