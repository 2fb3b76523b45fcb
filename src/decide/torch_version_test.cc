#include "decide/torch_version.h"

#include <gtest/gtest.h>

namespace gpuenv {
namespace {

struct Row {
  std::string text;
  bool parses;
  int major, minor, patch;
  std::string suffix, local;
  bool official;
};

TEST(TorchVersion, Parses) {
  const std::vector<Row> rows = {
      {"2.11.0+cu130", true, 2, 11, 0, "", "cu130", true},
      {"2.8.0", true, 2, 8, 0, "", "", true},
      {"2.9.0a0+gitabc1234", true, 2, 9, 0, "a0", "gitabc1234", false},
      {"2.12.0.dev20260101+cu130", true, 2, 12, 0, ".dev20260101", "cu130", true},
      {"2.5.0a0+872d972e41.nv24.08", true, 2, 5, 0, "a0", "872d972e41.nv24.08", false},
      {"2.4.1+cpu", true, 2, 4, 1, "", "cpu", true},
      {"2.10", true, 2, 10, 0, "", "", true},
      {"2.3.0+rocm6.0", true, 2, 3, 0, "", "rocm6.0", false},
      {"", false, 0, 0, 0, "", "", false},
      {"2", false, 0, 0, 0, "", "", false},
      {"two.one", false, 0, 0, 0, "", "", false},
      {"2.x", false, 0, 0, 0, "", "", false},
      {"99999999999.1", false, 0, 0, 0, "", "", false},
  };
  for (const Row& r : rows) {
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
