// Snapshots taken on real machines (tests/machines/real/) with `gpuenv
// detect --json`: they parse, and the plan for them is what we measured.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "decide/decide.h"
#include "model/snapshot.h"
#include "test_paths.h"

namespace gpuenv {
namespace {

Machine load(const std::string& name) {
  std::ifstream in(test_paths::tests_dir() + "/machines/real/" + name);
  std::stringstream buf;
  buf << in.rdbuf();
  Machine m;
  std::string err;
  EXPECT_TRUE(machine_from_json(buf.str(), &m, &err)) << name << ": " << err;
  return m;
}

TEST(RealMachines, H200Driver580) {
  Machine m = load("h200-driver580.json");
  ASSERT_EQ(m.gpus.size(), 1u);
  EXPECT_EQ(m.gpus[0].name, "NVIDIA H200");
  EXPECT_EQ(m.gpus[0].compute_capability, (ComputeCapability{9, 0}));
  EXPECT_EQ(m.nvidia.cuda_driver_version, 13000);
  Options o;
  o.env = m.env;  // the image sets TORCH_CUDA_ARCH_LIST=9.0a: kept
  Plan p = decide(m, o);
  ASSERT_NE(p.find("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"), nullptr);
  EXPECT_EQ(p.find("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE")->value, "1");
  EXPECT_EQ(p.find("TORCH_CUDA_ARCH_LIST")->value, "9.0a");
  EXPECT_EQ(p.find("TORCH_CUDA_ARCH_LIST")->origin, Origin::kKept);
  EXPECT_EQ(p.find("PYTORCH_ALLOC_CONF")->value, "expandable_segments:True");
}

TEST(RealMachines, TwoH200sWithNvlinkUnderTorchrun) {
  Machine m = load("h200x2-driver580.json");
  ASSERT_EQ(m.gpus.size(), 2u);
  ASSERT_EQ(m.pairs.size(), 1u);
  EXPECT_EQ(m.pairs[0].p2p_nvlink, "ok");
  EXPECT_EQ(m.gpus[1].nvlink_active_links, 18);
  Options o;
  o.env = {{"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "2"}, {"WORLD_SIZE", "2"}};
  Plan p = decide(m, o);
  ASSERT_TRUE(p.binding.has_value());
  EXPECT_EQ(p.binding->cpus.front(), 16);  // measured: rank 1 on CPUs 16-31
  EXPECT_EQ(p.binding->cpus.back(), 31);
  EXPECT_EQ(p.find("NCCL_P2P_DISABLE"), nullptr);
  EXPECT_EQ(p.find("NCCL_NVLS_ENABLE"), nullptr);
}

}  // namespace
}  // namespace gpuenv
