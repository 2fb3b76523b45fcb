// The labeler tables kept honest, as Doctor.EveryCheckHasAFiringRow keeps
// doctor's: every labeler labels some machine; the labels gpuenv writes under
// GFD's names are names GFD writes; and --namespace nvidia.com moves exactly
// those to nvidia.com/, keeping the rest under gpuenv.dev/.
#include "decide/labels/labelers.h"

#include <gtest/gtest.h>

#include <set>

#include "builders.h"

namespace gpuenv {
namespace {

using testing::machine::a100_mig;
using testing::machine::h200;
using testing::machine::rtx3090_4090;

Machine measured_h200() {
  Machine m = h200(2);
  for (const Gpu& g : m.gpus) {
    for (const char* key : {"gemm_bf16_8192", "h2d_pinned"}) {
      Measurement x;
      x.key = key, x.gpu_uuid = *g.uuid, x.value = 100, x.unit = "x", x.measured_at = "2026-11-29T12:00:00Z";
      m.measurements.push_back(x);
    }
  }
  return m;
}

Machine a100_mixed() {
  return testing::MachineBuilder().gpus(testing::models::a100_80gb(), 2)
      .with_mig(0, 2, "3g.40gb", 40192ull << 20)
      .with_mig(1, 1, "7g.80gb", 81152ull << 20);
}

std::vector<Machine> machines() { return {measured_h200(), a100_mig(), a100_mixed(), rtx3090_4090()}; }

DevicePluginConfig mps_sharing() {
  DevicePluginConfig c;
  c.mps = std::vector<ReplicatedResource>{{"nvidia.com/gpu", "", 2}};
  return c;
}

std::set<std::string> names(const NodeLabels& l) {
  std::set<std::string> out;
  for (const auto& [k, v] : l) out.insert(k);
  return out;
}

TEST(Labelers, EveryLabelerLabelsSomeMachine) {
  DevicePluginConfig sharing = mps_sharing();
  for (const auto* table : {&gpuenv_labelers(), &gfd_labelers()})
    for (const Labeler& l : *table) {
      bool labelled = false;
      for (const Machine& m : machines()) {
        LabelContext c{m, {}, "ok", &sharing};
        for (const Gpu& g : m.gpus) c.gpus.push_back(&g);
        labelled = labelled || !l.fn(c, nullptr).empty();
      }
      EXPECT_TRUE(labelled) << l.name << ": labels none of the machines";
    }
}

// What gpuenv.dev/ holds under GFD's names, GFD writes under nvidia.com/ on
// some machine (mig.strategy, for one, only under single or mixed).
TEST(Labelers, GfdNamesUnderGpuenvDevAreNamesGfdWrites) {
  std::set<std::string> gpuenv_gfd_named, gfd;
  for (const Machine& m : machines()) {
    LabelContext c{m, {}, std::nullopt};
    for (const Gpu& g : m.gpus) c.gpus.push_back(&g);
    for (const Labeler& l : gpuenv_labelers())
      if (l.gfd_names)
        for (const auto& [k, v] : l.fn(c, nullptr)) gpuenv_gfd_named.insert(k);
    for (const auto& k : names(run_labelers(gfd_labelers(), c, false, nullptr))) gfd.insert(k);
  }
  for (const std::string& k : gpuenv_gfd_named) EXPECT_TRUE(gfd.count(k)) << k << " is no label GFD writes";
}

TEST(Labelers, NvidiaNamespaceMovesGfdNamesAndKeepsTheRest) {
  Machine m = measured_h200();
  NodeLabels all = node_labels(m, "ok");
  LabelOptions o;
  o.ns = LabelNamespace::kNvidia;
  LabelSet set = node_label_set(m, "ok", o);
  EXPECT_EQ(names(set.gpuenv), (std::set<std::string>{"doctor", "driver.major", "driver.minor", "driver.rev", "tf32",
                                                       "bf16", "fp8", "fp4", "torch.wheel", "torch.wheel.as-of",
                                                       "bench.bf16-tflops", "bench.h2d-gbps"}));
  for (const auto& [k, v] : set.gpuenv) EXPECT_EQ(all.at(k), v) << k;
  EXPECT_EQ(set.nvidia.at("gpu.product"), "NVIDIA-H200");
  EXPECT_EQ(set.nvidia.at("gpu.count"), "2");
  EXPECT_EQ(set.nvidia.at("gpu.mode"), "compute");
  EXPECT_EQ(node_label_set(m, "ok", LabelOptions{}), (LabelSet{all, {}})) << "the default namespace is node_labels'";
}

TEST(Labelers, FeatureFileOfBothNamespaces) {
  LabelSet set{{{"doctor", "ok"}}, {{"gpu.count", "1"}}};
  EXPECT_EQ(namespaced_feature_file(set, "2026-11-29T12:05:00Z"),
            "# Written by gpuenv labels for Node Feature Discovery's local source.\n"
            "# +expiry-time=2026-11-29T12:05:00Z\n"
            "gpuenv.dev/doctor=ok\n"
            "nvidia.com/gpu.count=1\n");
}

// A value GFD would write but Kubernetes refuses is left out, named in full.
TEST(Labelers, AnInvalidGfdValueIsDroppedWithItsNamespace) {
  Machine m = h200();
  m.host.product_name = "To Be Filled By O.E.M.";
  LabelOptions o;
  o.ns = LabelNamespace::kNvidia;
  std::vector<std::string> dropped;
  LabelSet set = node_label_set(m, std::nullopt, o, &dropped);
  EXPECT_FALSE(set.nvidia.count("gpu.machine"));
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(dropped[0].rfind("nvidia.com/gpu.machine=To-Be-Filled-By-O.E.M.: not a Kubernetes label value", 0), 0u)
      << dropped[0];
}

}  // namespace
}  // namespace gpuenv
