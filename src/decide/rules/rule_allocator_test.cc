#include <gtest/gtest.h>

#include "decide/rules/rules.h"
#include "rule_expect.h"

namespace gpuenv {
namespace {

using namespace gpuenv::testing;

const char kNew[] = "PYTORCH_ALLOC_CONF";
const char kOld[] = "PYTORCH_CUDA_ALLOC_CONF";
const char kOn[] = "expandable_segments:True";

Machine torch(MachineBuilder b, const std::string& version) { return b.torch(version, "12.8"); }
Machine t211(MachineBuilder b) { return torch(b, "2.11.0+cu130"); }

std::vector<RuleCase> allocator_machines() {
  // clang-format off
  return {
      {"GTX 1080", t211(machine::gtx1080()), {}, {{kNew, kOn}}},
      {"V100", t211(machine::v100()), {}, {{kNew, kOn}}},
      {"T4", t211(machine::t4()), {}, {{kNew, kOn}}},
      {"A10", t211(machine::a10()), {}, {{kNew, kOn}}},
      {"8x A100 NVLink", t211(machine::a100_nvlink_8()), {}, {{kNew, kOn}}},
      {"A100 MIG", t211(machine::a100_mig()), {}, {{kNew, kOn}}},
      {"RTX 3090 + 4090", t211(machine::rtx3090_4090()), {}, {{kNew, kOn}}},
      {"L4", t211(machine::l4()), {}, {{kNew, kOn}}},
      {"H100", t211(machine::h100()), {}, {{kNew, kOn}}},
      {"H200", t211(machine::h200()), {}, {{kNew, kOn}}},
      {"B200", t211(machine::b200()), {}, {{kNew, kOn}}},
      {"RTX 5090", t211(machine::rtx5090()), {}, {{kNew, kOn}}},
      {"Jetson Orin: Tegra", torch(machine::jetson_orin(), "2.5.0a0+872d972e41.nv24.08"), {}, {},
       {{kInfo, "on Jetson (Tegra) boards"}}},
      {"Jetson Thor: Tegra", one_gpu("NVIDIA Thor", {11, 0}), {}, {}, {{kInfo, "on Jetson (Tegra) boards"}}},
      {"GB10 is not Tegra", one_gpu("NVIDIA GB10", {12, 1}), {}, {{kOld, kOn}}},
      {"no GPU", machine::none(), {}, {}},
      {"CUDA_VISIBLE_DEVICES keeps the 4090 of a mixed box", t211(machine::rtx3090_4090()),
       {{"CUDA_VISIBLE_DEVICES", "1"}}, {{kNew, kOn}}},
      {"CUDA_VISIBLE_DEVICES hides every GPU", t211(machine::h100()),
       {{"CUDA_VISIBLE_DEVICES", ""}}, {}},
  };
  // clang-format on
}

std::vector<RuleCase> versions() {
  // clang-format off
  return {
      {"no torch: the old name", machine::h100(), {}, {{kOld, kOn}}},
      {"unparsable torch version: the old name", torch(machine::h100(), "main"), {}, {{kOld, kOn}}},
      {"2.10 reads the new name", torch(machine::h100(), "2.10.0+cu128"), {}, {{kNew, kOn}}},
      {"2.10 source build", torch(machine::h100(), "2.10.0a0+gitabc1234"), {}, {{kNew, kOn}}},
      {"2.9.1 ignores it under the new name", torch(machine::h100(), "2.9.1+cu128"), {},
       {{kOld, kOn}}},
      {"2.9 source build", torch(machine::h100(), "2.9.0a0+gitabc1234"), {}, {{kOld, kOn}}},
      {"2.1 has expandable segments", torch(machine::h100(), "2.1.0+cu121"), {}, {{kOld, kOn}}},
      {"2.0 would reject the option", torch(machine::h100(), "2.0.1+cu118"), {}, {},
       {{kWarn, "torch 2.0.1+cu118 predates it (2.1)"}}},
      {"1.13 too", torch(machine::v100(), "1.13.1+cu117"), {}, {}, {{kWarn, "predates it"}}},
  };
  // clang-format on
}

std::vector<RuleCase> user_values() {
  Machine t211 = torch(machine::h100(), "2.11.0+cu130");
  Machine t29 = torch(machine::h100(), "2.9.1+cu128");
  Machine none = machine::h100();
  // clang-format off
  return {
      {"2.9: merged into the old name", t29, {{kOld, "max_split_size_mb:512"}},
       {{kOld, "max_split_size_mb:512,expandable_segments:True"}}},
      {"2.11: merged into the old name the user uses", t211, {{kOld, "max_split_size_mb:512"}},
       {{kOld, "max_split_size_mb:512,expandable_segments:True"}}},
      {"2.11: merged into the new name", t211, {{kNew, "garbage_collection_threshold:0.6"}},
       {{kNew, "garbage_collection_threshold:0.6,expandable_segments:True"}}},
      {"2.11, both names: the new one, which torch reads first", t211,
       {{kNew, "max_split_size_mb:256"}, {kOld, "max_split_size_mb:512"}},
       {{kNew, "max_split_size_mb:256,expandable_segments:True"}}},
      {"no torch: the name the user uses", none, {{kNew, "max_split_size_mb:256"}},
       {{kNew, "max_split_size_mb:256,expandable_segments:True"}}},
      {"2.9: the new name is not where 2.9 reads expandable_segments", t29,
       {{kNew, "max_split_size_mb:256"}}, {{kOld, kOn}}},
      {"bracketed lists stay whole", t211, {{kNew, "roundup_power2_divisions:[256:1,512:2,>:1]"}},
       {{kNew, "roundup_power2_divisions:[256:1,512:2,>:1],expandable_segments:True"}}},
      {"spaces and a trailing comma", t211, {{kNew, " max_split_size_mb:512, "}},
       {{kNew, "max_split_size_mb:512,expandable_segments:True"}}},
      {"an empty value", t211, {{kNew, ""}}, {{kNew, kOn}}},
      {"user turned it off", t29, {{kOld, "expandable_segments:False"}}, {},
       {{kInfo, "your PYTORCH_CUDA_ALLOC_CONF already sets expandable_segments"}}},
      {"user turned it on, among other keys", t211,
       {{kNew, "max_split_size_mb:512, expandable_segments : True"}}, {},
       {{kInfo, "your PYTORCH_ALLOC_CONF already sets expandable_segments"}}},
      {"cudaMallocAsync has no expandable segments", t211, {{kNew, "backend:cudaMallocAsync"}}, {},
       {{kInfo, "selects backend:cudaMallocAsync"}}},
      {"backend:native is fine", t211, {{kNew, "backend:native"}},
       {{kNew, "backend:native,expandable_segments:True"}}},
  };
  // clang-format on
}

void run_allocator(const std::vector<RuleCase>& rows) { run_table(rule_allocator, rows); }

TEST(Allocator, Machines) { run_allocator(allocator_machines()); }
TEST(Allocator, TorchVersions) { run_allocator(versions()); }
TEST(Allocator, MergesUserValues) { run_allocator(user_values()); }

std::string reason(const Machine& m, const Env& env = {}) {
  Decision d = rule_allocator(m, options_for(m, env));
  return d.settings.empty() ? "(not set)" : d.settings[0].reason;
}

TEST(Allocator, ReasonSaysWhichNameAndWhy) {
  EXPECT_NE(reason(machine::h100())
                .find("no torch found: PYTORCH_CUDA_ALLOC_CONF, which every "
                      "torch reads"),
            std::string::npos);
  EXPECT_NE(reason(torch(machine::h100(), "2.11.0+cu130"))
                .find("torch 2.11.0+cu130 reads PYTORCH_ALLOC_CONF, the new name of "
                      "PYTORCH_CUDA_ALLOC_CONF"),
            std::string::npos);
  EXPECT_NE(reason(torch(machine::h100(), "2.9.1+cu128"))
                .find("honours expandable_segments only in PYTORCH_CUDA_ALLOC_CONF"),
            std::string::npos);
  EXPECT_NE(reason(torch(machine::h100(), "2.11.0"), {{kOld, "max_split_size_mb:512"}})
                .find("still reads PYTORCH_CUDA_ALLOC_CONF, the name you use; keeps your "
                      "max_split_size_mb:512"),
            std::string::npos);
}

// Expandable segments change how torch.multiprocessing shares CUDA tensors.
TEST(Allocator, ReasonWarnsOfCudaIpc) {
  EXPECT_NE(reason(torch(machine::h100(), "2.11.0+cu130"))
                .find("; but CUDA tensors shared through torch.multiprocessing (CUDA IPC) then "
                      "need pidfd_getfd, which fails with \"Operation not permitted\" where "
                      "ptrace is restricted (common in containers): set "
                      "expandable_segments:False for such jobs"),
            std::string::npos);
  EXPECT_NE(reason(torch(machine::h100(), "2.4.1+cu124"))
                .find("; but torch.multiprocessing cannot share CUDA tensors from them (CUDA IPC) "
                      "before torch 2.5: set expandable_segments:False for such jobs"),
            std::string::npos);
}

}  // namespace
}  // namespace gpuenv
