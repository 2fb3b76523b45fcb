#include "decide/export/profiling.h"

#include <gtest/gtest.h>

namespace gpuenv {
namespace {

TEST(Profiling, GpuModelAsASentenceNamesIt) {
  EXPECT_EQ(gpu_model("NVIDIA A100-SXM4-80GB"), "A100");
  EXPECT_EQ(gpu_model("Tesla T4"), "T4");
  EXPECT_EQ(gpu_model("NVIDIA L4"), "L4");
  EXPECT_EQ(gpu_model("NVIDIA GeForce RTX 3090"), "GeForce RTX 3090");
  EXPECT_EQ(these_gpus({"NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB", "Tesla T4"}), "this A100 and T4");
}

TEST(Profiling, EachCaseSaysWhichFieldsAndWhy) {
  const std::vector<std::string> a100 = {"NVIDIA A100-SXM4-80GB"};
  struct Row {
    ProfilingSources in;
    std::optional<std::string> gap;
  } rows[] = {
      {{}, std::nullopt},  // Hopper and newer only: GPM serves every GPU
      {{a100, false, std::nullopt},
       "DCGM_FI_PROF_*: NVML GPM needs Hopper or newer; install DCGM (libdcgm.so.4) to serve them on this A100"},
      {{a100, true, std::nullopt}, std::nullopt},
      {{a100, false, "dcgmStartEmbedded_v2 returned -33"},
       "DCGM_FI_PROF_*: NVML GPM needs Hopper or newer, and DCGM (libdcgm.so.4) cannot serve them on this A100: "
       "dcgmStartEmbedded_v2 returned -33"},
  };
  for (const Row& r : rows) EXPECT_EQ(profiling_gap(r.in), r.gap);
}

TEST(Profiling, TheMachineCountsWholeGpusBeforeHopper) {
  Machine m;
  m.gpus.resize(3);
  m.gpus[0].name = "NVIDIA A100-SXM4-80GB", m.gpus[0].compute_capability = ComputeCapability{8, 0};
  m.gpus[1].name = "NVIDIA H200", m.gpus[1].compute_capability = ComputeCapability{9, 0};
  m.gpus[2].name = "Tesla T4";  // capability unknown: not counted
  ProfilingSources s = profiling_sources(m);
  EXPECT_EQ(s.without_gpm, std::vector<std::string>{"NVIDIA A100-SXM4-80GB"});
  EXPECT_FALSE(s.dcgm);
  m.nvidia.dcgm_library = "libdcgm.so.4";
  EXPECT_TRUE(profiling_sources(m).dcgm);
}

TEST(Profiling, TheReadingsCountWhatNvmlSaidOfGpm) {
  Readings r;
  r.devices.resize(2);
  r.devices[0].name = "NVIDIA A100-SXM4-80GB", r.devices[0].gpm_unsupported = true;
  r.devices[1].name = "NVIDIA H200";
  r.dcgm_problem = "dcgmWatchFields returned -2";
  ProfilingSources s = profiling_sources(r);
  EXPECT_EQ(s.without_gpm, std::vector<std::string>{"NVIDIA A100-SXM4-80GB"});
  EXPECT_EQ(s.dcgm_problem, "dcgmWatchFields returned -2");
}

}  // namespace
}  // namespace gpuenv
