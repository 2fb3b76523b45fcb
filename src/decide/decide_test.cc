#include "decide/decide.h"

#include <gtest/gtest.h>

#include <set>

#include "builders.h"
#include "decide/rules.h"
#include "model/env_names.h"

namespace gpuenv {
namespace {

Options with_env(std::map<std::string, std::string> env, bool override_user = false) {
  Options o;
  o.cache_root = "/cache";
  o.env = std::move(env);
  o.override_user = override_user;
  return o;
}

TEST(Decide, EverySettingHasAReasonAndARule) {
  for (const auto& f : testing::fixtures()) {
    Plan p = decide(f.make(), with_env({}));
    for (const auto& s : p.settings) {
      EXPECT_FALSE(s.reason.empty()) << f.name << " " << s.name;
      EXPECT_FALSE(s.rule.empty()) << f.name << " " << s.name;
      EXPECT_EQ(s.origin, Origin::kDecided) << f.name << " " << s.name;
    }
  }
}

TEST(Decide, RulesOnlySetNamesTheSnapshotRecords) {
  // Machine::env records exactly steering_env_names(); a rule setting any
  // other name would make "kept from the user" invisible in snapshots.
  const auto& names = steering_env_names();
  std::set<std::string> known(names.begin(), names.end());
  for (const auto& f : testing::fixtures())
    for (const auto& s : decide(f.make(), with_env({{"LOCAL_RANK", "0"}})).settings)
      EXPECT_TRUE(known.count(s.name)) << s.name << " set by " << s.rule;
}

TEST(Decide, NamesAreUnique) {
  Plan p = decide(testing::machine::a100_nvlink_8(), with_env({}));
  std::set<std::string> seen;
  for (const auto& s : p.settings) EXPECT_TRUE(seen.insert(s.name).second) << s.name;
}

TEST(Decide, UserValueIsKept) {
  Plan p = decide(testing::machine::h100(), with_env({{"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "0"}}));
  const Setting* s = p.find("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->value, "0");
  EXPECT_EQ(s->origin, Origin::kKept);
  EXPECT_EQ(s->user_value, "0");
  EXPECT_EQ(s->reason.rfind("kept yours; gpuenv would set 1: ", 0), 0u) << s->reason;
}

TEST(Decide, OverrideReplacesUserValue) {
  Plan p = decide(testing::machine::h100(), with_env({{"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "0"}}, true));
  const Setting* s = p.find("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->value, "1");
  EXPECT_EQ(s->origin, Origin::kOverridden);
  EXPECT_EQ(s->user_value, "0");
}

TEST(Decide, TorchrunsDefaultOmpThreadsIsReplacedNotKept) {
  Machine m = testing::machine::h200(2);
  std::map<std::string, std::string> torchrun = {{"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "2"},
                                                 {"TORCHELASTIC_RUN_ID", "none"}, {"OMP_NUM_THREADS", "1"}};
  Plan under_torchrun = decide(m, with_env(torchrun));
  const Setting* s = under_torchrun.find("OMP_NUM_THREADS");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->origin, Origin::kDecided);
  EXPECT_NE(s->value, "1");
  EXPECT_NE(s->reason.find("replaces the launcher's OMP_NUM_THREADS=1"), std::string::npos) << s->reason;
  // Outside torchrun the same 1 is the user's choice, and kept.
  torchrun.erase("TORCHELASTIC_RUN_ID");
  Plan outside = decide(m, with_env(torchrun));
  ASSERT_NE(outside.find("OMP_NUM_THREADS"), nullptr);
  EXPECT_EQ(outside.find("OMP_NUM_THREADS")->origin, Origin::kKept);
  // Under torchrun, a value other than its default is the user's, and kept.
  torchrun["TORCHELASTIC_RUN_ID"] = "none";
  torchrun["OMP_NUM_THREADS"] = "3";
  Plan chosen = decide(m, with_env(torchrun));
  ASSERT_NE(chosen.find("OMP_NUM_THREADS"), nullptr);
  EXPECT_EQ(chosen.find("OMP_NUM_THREADS")->value, "3");
}

TEST(Decide, SameValueAsUserIsNotKeptNoise) {
  Plan p = decide(testing::machine::h100(), with_env({{"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "1"}}));
  EXPECT_EQ(p.find("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE")->origin, Origin::kDecided);
}

TEST(Decide, NeverTurnsOnNvlsOrPinsNcclAlgorithms) {
  for (const auto& f : testing::fixtures()) {
    Plan p = decide(f.make(), with_env({{"WORLD_SIZE", "16"}}));
    for (const char* banned : {"NCCL_ALGO", "NCCL_PROTO"}) EXPECT_EQ(p.find(banned), nullptr) << f.name;
    if (const Setting* nvls = p.find("NCCL_NVLS_ENABLE")) {
      EXPECT_EQ(nvls->value, "0") << f.name;
    }
  }
}

TEST(Decide, UserNvlsOffIsKept) {
  Plan p = decide(testing::machine::h200(8).with_nvlink(),
                  with_env({{"NCCL_NVLS_ENABLE", "0"}, {"WORLD_SIZE", "8"}}, true));
  if (const Setting* nvls = p.find("NCCL_NVLS_ENABLE")) {
    EXPECT_EQ(nvls->value, "0");
  }
}

TEST(Decide, RegistryNamesAreUnique) {
  std::set<std::string> seen;
  for (const auto& r : all_rules()) EXPECT_TRUE(seen.insert(r.name).second) << r.name;
}

}  // namespace
}  // namespace gpuenv
