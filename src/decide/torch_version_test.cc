#include "decide/torch_version.h"

#include <gtest/gtest.h>

namespace gpuenv {
namespace {

struct TorchRow {
  std::string text;
  bool parses;
  int major, minor, patch;
  std::string suffix, local;
  bool official;
};

TEST(TorchVersion, Parses) {
  const std::vector<TorchRow> rows = {
      {"2.11.0+cu130", true, 2, 11, 0, "", "cu130", true},
      {"2.8.0", true, 2, 8, 0, "", "", true},
      {"2.9.0a0+gitabc1234", true, 2, 9, 0, "a0", "gitabc1234", false},
      {"2.12.0.dev20260101+cu130", true, 2, 12, 0, ".dev20260101", "cu130", true},
      {"2.5.0a0+872d972e41.nv24.08", true, 2, 5, 0, "a0", "872d972e41.nv24.08", false},
      {"2.4.1+cpu", true, 2, 4, 1, "", "cpu", true},
      {"2.10", true, 2, 10, 0, "", "", true},
      {"2.3.0+rocm6.0", true, 2, 3, 0, "", "rocm6.0", false},
      {"2.10.0a0+3e8e2a4.nv25.12", true, 2, 10, 0, "a0", "3e8e2a4.nv25.12", false},
      {"2.14.0+cu130", true, 2, 14, 0, "", "cu130", true},
      {"2.99.0+cu140", true, 2, 99, 0, "", "cu140", true},
      {"", false, 0, 0, 0, "", "", false},
      {"2", false, 0, 0, 0, "", "", false},
      {"two.one", false, 0, 0, 0, "", "", false},
      {"2.x", false, 0, 0, 0, "", "", false},
      {"99999999999.1", false, 0, 0, 0, "", "", false},
  };
  for (const TorchRow& r : rows) {
    SCOPED_TRACE(r.text);
    auto t = parse_torch_version(r.text);
    ASSERT_EQ(t.has_value(), r.parses);
    if (!t) continue;
    EXPECT_EQ(t->major, r.major);
    EXPECT_EQ(t->minor, r.minor);
    EXPECT_EQ(t->patch, r.patch);
    EXPECT_EQ(t->suffix, r.suffix);
    EXPECT_EQ(t->local, r.local);
    EXPECT_EQ(t->official_build(), r.official);
  }
}

// What an index serves under its version (PEP 440: no pre-release, no
// local label other than a CUDA or CPU variant) may be reinstalled; NGC's,
// source and nightly builds may not.
TEST(TorchVersion, NotReinstallable) {
  struct Case {
    const char* text;
    bool keep, nvidia;
    const char* release;
  } cases[] = {
      {"2.10.0a0+3e8e2a4.nv25.12", true, true, "2.10.0"},
      {"2.5.0a0+872d972e41.nv24.08", true, true, "2.5.0"},
      {"2.9.0a0+gitabc1234", true, false, "2.9.0"},
      {"2.15.0.dev20261001+cu130", true, false, "2.15.0"},
      {"2.3.0+rocm6.0", true, false, "2.3.0"},
      {"2.14.0+cu130", false, false, "2.14.0"},
      {"2.99.0+cu140", false, false, "2.99.0"},
      {"2.12.1", false, false, "2.12.1"},
      {"2.11.0+cpu", false, false, "2.11.0"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    auto t = *parse_torch_version(c.text);
    EXPECT_EQ(t.not_reinstallable(), c.keep);
    EXPECT_EQ(t.nvidia_build(), c.nvidia);
    EXPECT_EQ(t.release_version(), c.release);
  }
  auto v = [](const char* s) { return *parse_torch_version(s); };
  EXPECT_EQ(v("2.99.0+cu140").compare_release(v("2.14")), 1);
  EXPECT_EQ(v("2.14.1").compare_release(v("2.14")), 0);
  EXPECT_EQ(v("2.9.1").compare_release(v("2.14")), -1);  // numbers, not text
}

TEST(TorchVersion, AtLeast) {
  auto t = *parse_torch_version("2.10.0+cu128");
  EXPECT_TRUE(t.at_least(2, 10));
  EXPECT_TRUE(t.at_least(2, 9));
  EXPECT_TRUE(t.at_least(1, 13));
  EXPECT_FALSE(t.at_least(2, 11));
  EXPECT_FALSE(t.at_least(3, 0));
}

}  // namespace
}  // namespace gpuenv
