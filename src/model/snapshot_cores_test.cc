// Host::cpu_cores in the snapshot: written, read back, absent in older
// snapshots, and refused when malformed (docs/snapshot.md, "host").
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/snapshot.h"

namespace gpuenv {
namespace {

TEST(SnapshotCores, RoundTrip) {
  Machine m;
  m.host.affinity_cpus = std::vector<int>{0, 1, 2, 64, 65};
  m.host.cpu_cores = std::vector<std::vector<int>>{{0, 64}, {1, 65}, {2}};
  std::string json = machine_to_json(m);
  EXPECT_EQ(nlohmann::json::parse(json)["host"]["cpu_cores"],
            nlohmann::json::parse("[[0, 64], [1, 65], [2]]"));
  Machine back;
  std::string err;
  ASSERT_TRUE(machine_from_json(json, &back, &err)) << err;
  EXPECT_EQ(back, m);
}

TEST(SnapshotCores, UnknownIsNullAndOlderSnapshotsLackIt) {
  EXPECT_TRUE(nlohmann::json::parse(machine_to_json(Machine{}))["host"]["cpu_cores"].is_null());
  Machine old;
  std::string err;
  ASSERT_TRUE(machine_from_json(R"({"schema_version": 1, "host": {"online_cpus": 4}})", &old, &err))
      << err;
  EXPECT_EQ(old.host.cpu_cores, std::nullopt);
}

TEST(SnapshotCores, MalformedNamesTheField) {
  struct Row {
    const char* json;
    const char* error;
  } rows[] = {
      {R"({"schema_version": 1, "host": {"cpu_cores": [[0, -1]]}})",
       "host.cpu_cores[0][1]: value -1 out of range"},
      {R"({"schema_version": 1, "host": {"cpu_cores": [0]}})", "host.cpu_cores[0]: expected an array"},
      {R"({"schema_version": 1, "host": {"cpu_cores": {"0": [0]}}})",
       "host.cpu_cores: expected an array"},
  };
  for (const Row& r : rows) {
    Machine m;
    std::string err;
    EXPECT_FALSE(machine_from_json(r.json, &m, &err)) << r.json;
    EXPECT_NE(err.find(r.error), std::string::npos) << err;
  }
}

}  // namespace
}  // namespace gpuenv
