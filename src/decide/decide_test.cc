#include "decide/decide.h"

#include <gtest/gtest.h>

#include <set>

#include "builders.h"
#include "decide/rules/rules.h"
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

// Each variable has one owning rule, so no rule's setting silently replaces
// another's by the order of the table. The machines include P2P that both
// the driver and gpuenv bench report broken.
TEST(Decide, EveryNameHasOneOwningRule) {
  std::vector<Machine> machines;
  for (const auto& f : testing::fixtures()) machines.push_back(f.make());
  Machine p2p = testing::machine::h100(2).with_pcie_p2p("chipset_not_supported");
  Measurement slow;
  slow.key = "p2p", slow.gpu_uuid = *p2p.gpus[0].uuid, slow.peer_uuid = *p2p.gpus[1].uuid;
  slow.status = "failed", slow.detail = "wrong result", slow.measured_at = "2025-03-04T05:06:07Z";
  p2p.measurements = {slow};
  machines.push_back(p2p);
  const std::vector<std::map<std::string, std::string>> envs = {
      {}, {{"LOCAL_RANK", "0"}, {"WORLD_SIZE", "16"}, {"TORCHELASTIC_RUN_ID", "x"}}};
  std::map<std::string, std::string> owner;
  for (const Machine& m : machines)
    for (const auto& env : envs)
      for (const Rule& r : all_rules())
        for (const auto& s : r.fn(m, with_env(env)).settings) {
          auto it = owner.emplace(s.name, r.name).first;
          EXPECT_EQ(it->second, r.name) << s.name << " is set by two rules";
        }
  EXPECT_EQ(owner.at("NCCL_P2P_DISABLE"), "nccl");
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

// PYTHONPATH is a search path: the user's entries stay, after gpuenv's hook.
TEST(Decide, SearchPathKeepsTheUsersEntriesAfterGpuenvs) {
  struct Row {
    std::string user;  // "" = unset
    std::string value;
  } rows[] = {
      {"", "/opt/gpuenv/python"},
      {"/home/me/src", "/opt/gpuenv/python:/home/me/src"},
      {"/a:/opt/gpuenv/python", "/a:/opt/gpuenv/python"},
  };
  for (const Row& r : rows) {
    for (bool override_user : {false, true}) {
      Options o = with_env(r.user.empty() ? std::map<std::string, std::string>{}
                                          : std::map<std::string, std::string>{{"PYTHONPATH", r.user}},
                           override_user);
      o.python_hook_dir = "/opt/gpuenv/python";
      Plan p = decide(testing::machine::h100(), o);
      const Setting* s = p.find("PYTHONPATH");
      ASSERT_NE(s, nullptr) << r.user;
      EXPECT_EQ(s->value, r.value) << r.user;
      EXPECT_EQ(s->origin, Origin::kDecided) << r.user;
    }
  }
}

TEST(Decide, OverrideReplacesUserValue) {
  Plan p = decide(testing::machine::h100(), with_env({{"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "0"}}, true));
  const Setting* s = p.find("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->value, "1");
  EXPECT_EQ(s->origin, Origin::kOverridden);
  EXPECT_EQ(s->user_value, "0");
}

// NGC's base image sets TORCH_CUDA_ARCH_LIST to every arch it built: that
// value is the image's, so the visible GPUs' list replaces it; a value of
// the user's own (any other) is kept.
TEST(Decide, TheBaseImagesArchListIsReplacedAndTheUsersKept) {
  Machine m = testing::machine::h200(2);
  const std::string ngc = "7.5 8.0 8.6 9.0 10.0 12.0+PTX";
  m.base_image_env = {{"TORCH_CUDA_ARCH_LIST", ngc}};
  Plan image = decide(m, with_env({{"TORCH_CUDA_ARCH_LIST", ngc}}));
  const Setting* s = image.find("TORCH_CUDA_ARCH_LIST");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->value, "9.0");
  EXPECT_EQ(s->origin, Origin::kDecided);
  EXPECT_NE(s->reason.find(" (replaces TORCH_CUDA_ARCH_LIST=" + ngc + ", the container image's base value"),
            std::string::npos)
      << s->reason;
  Plan user = decide(m, with_env({{"TORCH_CUDA_ARCH_LIST", "8.0"}}));
  ASSERT_NE(user.find("TORCH_CUDA_ARCH_LIST"), nullptr);
  EXPECT_EQ(user.find("TORCH_CUDA_ARCH_LIST")->origin, Origin::kKept);
  EXPECT_EQ(user.find("TORCH_CUDA_ARCH_LIST")->value, "8.0");
  // Without the image's record the same value is the user's, as before.
  m.base_image_env.clear();
  Plan unrecorded = decide(m, with_env({{"TORCH_CUDA_ARCH_LIST", ngc}}));
  EXPECT_EQ(unrecorded.find("TORCH_CUDA_ARCH_LIST")->origin, Origin::kKept);
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
  EXPECT_NE(s->reason.find(" (replaces OMP_NUM_THREADS=1, the value torchrun gives every worker "
                           "when it is unset)"),
            std::string::npos)
      << s->reason;
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

// A kept or replaced value is named by where it came from only when that is
// known: the --machine snapshot's record, else the environment gpuenv runs in.
TEST(Decide, KeptAndReplacedValuesSayWhoseTheyAre) {
  const std::string name = "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE";
  struct Row {
    bool snapshot, override_user;
    std::string reason_part;
  } rows[] = {
      {false, false, "kept yours; gpuenv would set 1: "},
      {true, false, "kept the snapshot's; gpuenv would set 1: "},
      {false, true, " (replaces your TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=0, as --override asks)"},
      {true, true, " (replaces the snapshot's TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=0, as --override asks)"},
  };
  for (const Row& r : rows) {
    Options o = with_env({{name, "0"}}, r.override_user);
    if (r.snapshot) o.from_snapshot.insert(name);
    Plan plan = decide(testing::machine::h100(), o);
    const Setting* s = plan.find(name);
    ASSERT_NE(s, nullptr);
    EXPECT_NE(s->reason.find(r.reason_part), std::string::npos) << s->reason;
    EXPECT_EQ(s->reason.find("container image"), std::string::npos) << s->reason;
  }
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

namespace gpuenv {
namespace {

// Slurm's gres binding is never replaced, not even with --override: the mig
// rule would name the MIG device by UUID, Slurm gave its index.
TEST(Decide, SlurmsGpuBindingIsKeptEvenWithOverride) {
  Options o = with_env({{"SLURM_PROCID", "0"}, {"SLURM_LOCALID", "0"}, {"SLURM_NTASKS", "1"},
                        {"SLURM_STEP_ID", "0"}, {"CUDA_VISIBLE_DEVICES", "0"}, {"SLURM_STEP_GPUS", "0"}},
                       /*override_user=*/true);
  Plan p = decide(testing::machine::a100_mig(), o);
  const Setting* cvd = p.find("CUDA_VISIBLE_DEVICES");
  ASSERT_TRUE(cvd);
  EXPECT_EQ(cvd->value, "0");
  EXPECT_EQ(cvd->origin, Origin::kKept);
  EXPECT_EQ(cvd->reason.rfind("kept Slurm's GPU binding (SLURM_STEP_GPUS=0), which gpuenv never replaces", 0), 0u)
      << cvd->reason;
  EXPECT_EQ(p.launch.engine, Engine::kSlurm);
  // The same variable set by the user, not Slurm: --override replaces it.
  o.env.erase("SLURM_STEP_GPUS");
  EXPECT_EQ(decide(testing::machine::a100_mig(), o).find("CUDA_VISIBLE_DEVICES")->origin, Origin::kOverridden);
}

}  // namespace
}  // namespace gpuenv
