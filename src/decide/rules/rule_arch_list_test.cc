#include <gtest/gtest.h>

#include "decide/rules/rules.h"
#include "rule_expect.h"

namespace gpuenv {
namespace {

using namespace gpuenv::testing;


RuleCase ptx(RuleCase c) {
  c.ptx = true;
  return c;
}

MachineBuilder with_torch(MachineBuilder b, const std::string& version) {
  return b.torch(version, "12.8");
}

Machine torch_on(Machine m, const std::string& version) {
  m.torch.emplace();
  m.torch->version = version;
  m.torch->cuda_version = "12.8";
  return m;
}

const char kVar[] = "TORCH_CUDA_ARCH_LIST";

std::vector<RuleCase> arch_list_rows() {
  // clang-format off
  return {
      {"GTX 1080", machine::gtx1080(), {}, {{kVar, "6.1"}}},
      {"V100", machine::v100(), {}, {{kVar, "7.0"}}},
      {"T4", machine::t4(), {}, {{kVar, "7.5"}}},
      {"A10", machine::a10(), {}, {{kVar, "8.6"}}},
      {"8x A100 NVLink, one entry", machine::a100_nvlink_8(), {}, {{kVar, "8.0"}}},
      {"A100 MIG: the parent's capability", machine::a100_mig(), {}, {{kVar, "8.0"}}},
      {"RTX 3090 + 4090, sorted", machine::rtx3090_4090(), {}, {{kVar, "8.6;8.9"}}},
      {"mixed box, 4090 listed first",
       MachineBuilder().gpus(models::rtx4090()).gpus(models::rtx3090()), {}, {{kVar, "8.6;8.9"}}},
      {"L4", machine::l4(), {}, {{kVar, "8.9"}}},
      {"H100", machine::h100(), {}, {{kVar, "9.0"}}},
      {"8x H200", machine::h200(8).with_nvlink(), {}, {{kVar, "9.0"}}},
      {"B200", machine::b200(), {}, {{kVar, "10.0"}}},
      {"RTX 5090", machine::rtx5090(), {}, {{kVar, "12.0"}}},
      {"Jetson Orin", machine::jetson_orin(), {}, {{kVar, "8.7"}}},
      {"no GPU", machine::none(), {}, {}, {{kInfo, "no GPU visible"}}},
      {"CUDA_VISIBLE_DEVICES=1 keeps the 4090", machine::rtx3090_4090(),
       {{"CUDA_VISIBLE_DEVICES", "1"}}, {{kVar, "8.9"}}},
      {"CUDA_VISIBLE_DEVICES=0 keeps the 3090", machine::rtx3090_4090(),
       {{"CUDA_VISIBLE_DEVICES", "0"}}, {{kVar, "8.6"}}},
      {"CUDA_VISIBLE_DEVICES empty hides all", machine::rtx3090_4090(),
       {{"CUDA_VISIBLE_DEVICES", ""}}, {}, {{kInfo, "no GPU visible"}}},
      ptx({"--ptx on the highest", machine::rtx3090_4090(), {}, {{kVar, "8.6;8.9+PTX"}}}),
      ptx({"--ptx, one GPU", machine::h100(), {}, {{kVar, "9.0+PTX"}}}),
      {"capability not sensed", without_cc(machine::rtx3090_4090(), 1),
       {}, {}, {{kWarn, "RTX 4090 (cc unknown) could not be sensed"}}},
      {"torch 2.6 rejects 12.0", with_torch(machine::rtx5090(), "2.6.0+cu126"),
       {}, {}, {{kWarn, "torch 2.6.0+cu126 does not accept arch 12.0"}}},
      {"torch 2.7 accepts 12.0", with_torch(machine::rtx5090(), "2.7.0+cu128"),
       {}, {{kVar, "12.0"}}},
      {"torch 2.7 rejects GB10's 12.1", torch_on(one_gpu("NVIDIA GB10", {12, 1}), "2.7.1+cu128"),
       {}, {}, {{kWarn, "does not accept arch 12.1"}}},
      {"torch 2.8 accepts 12.1", torch_on(one_gpu("NVIDIA GB10", {12, 1}), "2.8.0+cu128"),
       {}, {{kVar, "12.1"}}},
      {"torch 2.8 rejects Thor's 11.0", torch_on(one_gpu("NVIDIA Thor", {11, 0}), "2.8.0"),
       {}, {}, {{kWarn, "does not accept arch 11.0"}}},
      {"torch 2.9 accepts 11.0", torch_on(one_gpu("NVIDIA Thor", {11, 0}), "2.9.0"),
       {}, {{kVar, "11.0"}}},
      {"torch 2.9 dropped 10.1", torch_on(one_gpu("NVIDIA Thor", {10, 1}), "2.9.0+cu128"),
       {}, {}, {{kWarn, "does not accept arch 10.1"}}},
      {"torch 2.8 rejects B300's 10.3", torch_on(one_gpu("NVIDIA B300", {10, 3}), "2.8.0"),
       {}, {}, {{kWarn, "does not accept arch 10.3"}}},
      {"no torch release knows 8.8", torch_on(one_gpu("sm_88 part", {8, 8}), "2.11.0"),
       {}, {}, {{kWarn, "does not accept arch 8.8"}}},
      {"no torch: set anyway", one_gpu("NVIDIA GB10", {12, 1}), {}, {{kVar, "12.1"}}},
      {"unparsable torch version: set anyway", torch_on(machine::h100(), "main"),
       {}, {{kVar, "9.0"}}},
      {"old torch, old GPU", with_torch(machine::v100(), "2.0.1+cu118"), {}, {{kVar, "7.0"}}},
  };
  // clang-format on
}

TEST(ArchList, Table) { run_table(rule_arch_list, arch_list_rows()); }

TEST(ArchList, ReasonNamesTheGpusAndFamilies) {
  Machine m = machine::rtx3090_4090();
  Decision d = rule_arch_list(m, options_for(m));
  ASSERT_EQ(d.settings.size(), 1u);
  EXPECT_EQ(d.settings[0].reason,
            "build CUDA extensions for exactly the visible GPUs: NVIDIA GeForce RTX 3090 "
            "(Ampere, 8.6), NVIDIA GeForce RTX 4090 (Ada Lovelace, 8.9)");
}

TEST(ArchList, PtxIsExplained) {
  Machine m = machine::h100();
  Options o = options_for(m);
  o.ptx = true;
  Decision d = rule_arch_list(m, o);
  ASSERT_EQ(d.settings.size(), 1u);
  EXPECT_NE(d.settings[0].reason.find("+PTX lets newer GPUs JIT-compile"), std::string::npos);
}

}  // namespace
}  // namespace gpuenv
