// Table rows for rule tests: a machine, the environment, and exactly what the
// rule must decide. Settings are compared as a whole name -> value map, so a
// row fails on a missing setting, a wrong value, and an unexpected one.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/machine.h"
#include "model/plan.h"

namespace gpuenv::testing {

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
};

inline Options options_with(const std::map<std::string, std::string>& env) {
  Options o;
  o.cache_root = "/cache";
  o.env = env;
  return o;
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
    Decision d = rule(row.machine, options_with(row.env));
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
