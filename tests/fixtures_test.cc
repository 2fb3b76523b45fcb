// Each named fixture's committed snapshot (tests/machines/<name>.json) equals
// what its builder produces, byte for byte, and parses back to the same
// Machine. GPUENV_UPDATE_FIXTURES=1 rewrites the files instead.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "builders.h"
#include "model/snapshot.h"
#include "test_paths.h"
#include "text_files.h"

namespace gpuenv {
namespace {

namespace fs = std::filesystem;

fs::path machines_dir() { return fs::path(test_paths::tests_dir()) / "machines"; }

bool updating() {
  const char* v = std::getenv("GPUENV_UPDATE_FIXTURES");
  return v && std::string(v) == "1";
}

using testing::slurp;

void write(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  ASSERT_TRUE(out.good()) << "cannot write " << p;
}

TEST(Fixture, CommittedSnapshotsMatchTheirBuilders) {
  for (const auto& f : testing::fixtures()) {
    SCOPED_TRACE(f.name);
    Machine built = f.make();
    std::string json = machine_to_json(built);
    fs::path path = machines_dir() / (std::string(f.name) + ".json");
    if (updating()) write(path, json);
    ASSERT_TRUE(fs::exists(path)) << path << " is missing; run with GPUENV_UPDATE_FIXTURES=1";
    std::string committed = slurp(path);
    EXPECT_EQ(committed, json) << path << " is stale; run with GPUENV_UPDATE_FIXTURES=1 and review the diff";
    Machine parsed;
    std::string err;
    ASSERT_TRUE(machine_from_json(committed, &parsed, &err)) << err;
    EXPECT_EQ(parsed, built);
  }
}

TEST(Fixture, EveryCommittedSnapshotHasABuilder) {
  std::set<std::string> names;
  for (const auto& f : testing::fixtures()) EXPECT_TRUE(names.insert(f.name).second) << "twice: " << f.name;
  for (const auto& entry : fs::directory_iterator(machines_dir())) {
    if (entry.path().extension() != ".json") continue;
    EXPECT_TRUE(names.count(entry.path().stem().string())) << entry.path() << " has no builder in fixtures()";
  }
}

}  // namespace
}  // namespace gpuenv
