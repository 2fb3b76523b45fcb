#include "decide/run/tune.h"

#include <gtest/gtest.h>

namespace gpuenv {
namespace {

Verdict tune_input_bound() {
  Verdict v;
  v.name = "input-bound";
  v.tune = {{"num_workers", "15"}, {"pin_memory", "True"}, {"persistent_workers", "True"}};
  return v;
}

TEST(Tune, AllUnlessRefused) {
  TuneChoice c;
  std::string err;
  ASSERT_TRUE(parse_tune(std::string("all"), "", &c, &err)) << err;
  EXPECT_TRUE(c.enabled);
  EXPECT_EQ(tune_env_value(tune_changes({tune_input_bound()}, c)), "num_workers=15,pin_memory=True,persistent_workers=True");
  ASSERT_TRUE(parse_tune(std::string("-num_workers, -pin_memory"), "", &c, &err)) << err;
  EXPECT_EQ(tune_env_value(tune_changes({tune_input_bound()}, c)), "persistent_workers=True");
  ASSERT_TRUE(parse_tune(std::string("-num_workers"), "persistent_workers,pin_memory", &c, &err)) << err;
  std::vector<TuneChange> changes = tune_changes({tune_input_bound()}, c);
  ASSERT_EQ(changes.size(), 3u);
  for (const auto& ch : changes) EXPECT_TRUE(ch.refused) << ch.name;
  EXPECT_EQ(tune_env_value(changes), "");
  ASSERT_TRUE(parse_tune(std::nullopt, "", &c, &err));
  EXPECT_FALSE(c.enabled);
}

TEST(Tune, UnknownNamesAreRefusedWithTheList) {
  TuneChoice c;
  std::string err;
  EXPECT_FALSE(parse_tune(std::string("-batch_size"), "", &c, &err));
  EXPECT_NE(err.find("\"-batch_size\""), std::string::npos) << err;
  EXPECT_NE(err.find("num_workers, pin_memory, persistent_workers"), std::string::npos) << err;
  EXPECT_FALSE(parse_tune(std::string("num_workers"), "", &c, &err));  // not "-NAME"
  EXPECT_FALSE(parse_tune(std::nullopt, "workers", &c, &err));
  EXPECT_NE(err.find("GPUENV_TUNE_SKIP"), std::string::npos) << err;
}

// issue 25: precision is applied only when named, never by --tune alone.
TEST(Tune, PrecisionOnlyWhenNamed) {
  TuneChoice c;
  std::string err;
  ASSERT_TRUE(parse_tune(std::string("true"), "", &c, &err)) << err;
  EXPECT_FALSE(c.wants("precision"));
  ASSERT_TRUE(parse_tune(std::string("+precision"), "", &c, &err)) << err;
  EXPECT_TRUE(c.wants("precision"));
  EXPECT_EQ(tune_env_value(tune_changes({tune_input_bound()}, c)), "num_workers=15,pin_memory=True,persistent_workers=True");
  ASSERT_TRUE(parse_tune(std::string("+precision,-num_workers"), "", &c, &err)) << err;
  EXPECT_TRUE(c.wants("precision"));
  EXPECT_EQ(tune_env_value(tune_changes({tune_input_bound()}, c)), "pin_memory=True,persistent_workers=True");
  ASSERT_TRUE(parse_tune(std::string("true"), "", &c, &err, "precision")) << err;  // GPUENV_TUNE_ADD
  EXPECT_TRUE(c.wants("precision"));
  ASSERT_TRUE(parse_tune(std::string("+precision"), "precision", &c, &err)) << err;  // GPUENV_TUNE_SKIP wins
  EXPECT_FALSE(c.wants("precision"));
  ASSERT_TRUE(parse_tune(std::nullopt, "", &c, &err, "precision")) << err;  // no --tune: nothing
  EXPECT_FALSE(c.wants("precision"));
  EXPECT_FALSE(parse_tune(std::string("+precision,-precision"), "", &c, &err));
  EXPECT_NE(err.find("both +precision and -precision"), std::string::npos) << err;
  EXPECT_FALSE(parse_tune(std::string("+fp16"), "", &c, &err));
  EXPECT_NE(err.find("only when named (+NAME): precision"), std::string::npos) << err;
  EXPECT_FALSE(parse_tune(std::string("true"), "", &c, &err, "num_workers"));
  EXPECT_NE(err.find("GPUENV_TUNE_ADD: \"num_workers\" is not an opt-in setting"), std::string::npos) << err;
}

TEST(Tune, TheFirstVerdictNamingASettingWins) {
  Verdict copy;
  copy.name = "copy-bound";
  copy.tune = {{"pin_memory", "True"}};
  Verdict none;
  none.name = "busy";
  EXPECT_EQ(tune_env_value(tune_changes({copy, tune_input_bound()}, {})), "num_workers=15,pin_memory=True,persistent_workers=True");
  EXPECT_EQ(tune_env_value(tune_changes({copy}, {})), "pin_memory=True");
  EXPECT_TRUE(tune_changes({none}, {}).empty());
}

TEST(Tune, PythonPathGoesFirst) {
  EXPECT_EQ(prepend_pythonpath("/hook", nullptr), "/hook");
  EXPECT_EQ(prepend_pythonpath("/hook", ""), "/hook");
  EXPECT_EQ(prepend_pythonpath("/hook", "/a:/b"), "/hook:/a:/b");
  EXPECT_EQ(prepend_pythonpath("/hook", "/hook:/a"), "/hook:/a");  // already first (the TF32 hook)
  EXPECT_EQ(prepend_pythonpath("/hook", "/a:/hook"), "/a:/hook");
}

}  // namespace
}  // namespace gpuenv
