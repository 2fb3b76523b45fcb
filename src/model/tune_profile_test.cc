#include "model/tune_profile.h"

#include <gtest/gtest.h>

namespace gpuenv {
namespace {

// What gpuenv writes, and only that, passes: a stored settings text is
// applied to every run and handed to the Python hook (issue 35, 6).
TEST(TuneProfile, SettingsTextsGpuenvWrites) {
  const std::pair<std::string, std::string> rows[] = {
      {"", ""},
      {"num_workers=0", ""},
      {"num_workers=32,pin_memory=True,persistent_workers=True", ""},
      {"pin_memory=False", ""},
      {"num_workers=33", "num_workers=33 is out of range (0 to 32)"},
      {"num_workers=2147483647", "num_workers=2147483647 is out of range (0 to 32)"},
      {"num_workers=99999999999999999999", "num_workers=99999999999999999999 is out of range (0 to 32)"},
      {"num_workers=-1", "num_workers=-1 is out of range (0 to 32)"},
      {"num_workers=+3", "num_workers=+3 is out of range (0 to 32)"},
      {"num_workers=3 ", "num_workers=3  is out of range (0 to 32)"},
      {"pin_memory=true", "pin_memory=true is not True or False"},
      {"persistent_workers=", "persistent_workers= is not True or False"},
      {"num_workers", "\"num_workers\" is not a setting --tune writes"},
      {"num_workers=2,", "\"\" is not a setting --tune writes"},
      {"timeout=5", "\"timeout=5\" is not a setting --tune writes"},
  };
  for (const auto& [text, why] : rows) EXPECT_EQ(tune_settings_problem(text), why) << text;
}

TEST(TuneProfile, RoundTripsAndRefusesWhatGpuenvWouldNotWrite) {
  TuneProfile p;
  p.command_fp = "fp";
  p.runs.push_back({7, "t", "num_workers=4,pin_memory=True", 2.5, 10, 1, "num_workers=48"});
  p.kept = p.next = "num_workers=4,pin_memory=True";
  p.dropped = {"persistent_workers"};
  TuneProfile back;
  std::string err;
  ASSERT_TRUE(profile_from_json(profile_to_json(p), &back, &err)) << err;
  EXPECT_EQ(back, p);
  nlohmann::json j = profile_to_json(p);
  j["kept"] = "num_workers=2147483647";
  EXPECT_FALSE(profile_from_json(j, &back, &err));
  EXPECT_EQ(err, "profile.kept: num_workers=2147483647 is out of range (0 to 32)");
}

}  // namespace
}  // namespace gpuenv
