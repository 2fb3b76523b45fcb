// node_labels over builder machines: each row states the whole label map, so
// a missing label, a wrong value and an unexpected label all fail.
#include "decide/node_labels.h"

#include <gtest/gtest.h>

#include <cmath>

#include "builders.h"

namespace gpuenv {
namespace {

using testing::machine::a100_mig;
using testing::machine::b200;
using testing::machine::gtx1080;
using testing::machine::h200;
using testing::machine::none;
using testing::machine::rtx3090_4090;

Measurement figure(const Gpu& g, const std::string& key, double value, const std::string& unit) {
  Measurement x;
  x.key = key, x.gpu_uuid = *g.uuid, x.value = value, x.unit = unit;
  x.measured_at = "2026-11-29T12:00:00Z";
  return x;
}

// 8 H200s, all measured; GPU 3 is the slowest. Smaller GEMMs and failed
// runs are not the headline.
Machine measured_h200s() {
  Machine m = h200(8);
  for (const Gpu& g : m.gpus) {
    m.measurements.push_back(figure(g, "gemm_bf16_8192", g.index == 3 ? 700.4 : 780, "TFLOP/s"));
    m.measurements.push_back(figure(g, "gemm_bf16_4096", 100, "TFLOP/s"));
    m.measurements.push_back(figure(g, "h2d_pinned", 55.4, "GB/s"));
  }
  Measurement failed = figure(m.gpus[0], "h2d_pinned", 1, "GB/s");
  failed.status = "failed";
  m.measurements.push_back(failed);
  return m;
}

// Measured on all GPUs but one: no node-wide figure.
Machine partly_measured() {
  Machine m = h200(2);
  m.measurements.push_back(figure(m.gpus[0], "gemm_bf16_8192", 780, "TFLOP/s"));
  return m;
}

Machine one_lost() {
  Machine m = h200(2);
  m.gpus[1].problem = Problem{"nvml", "gpu_lost", "fell off the bus", "reset it"};
  return m;
}

// GFD's meanings: cuda.driver.* is the driver's version, cuda.runtime.* the
// CUDA version it supports; driver.* is gpuenv's own spelling of the first.
const NodeLabels kDriver580 = {{"driver.major", "580"},      {"driver.minor", "95"},      {"driver.rev", "05"},
                           {"cuda.driver.major", "580"}, {"cuda.driver.minor", "95"}, {"cuda.driver.rev", "05"},
                           {"cuda.runtime.major", "13"}, {"cuda.runtime.minor", "0"}};

// Two A100s in MIG mode, with different profiles: GFD's mixed strategy.
Machine a100_mixed() {
  Machine m = testing::MachineBuilder().cpus(1, 32).gpus(testing::models::a100_80gb(), 2)
                  .with_mig(0, 3, "2g.20gb", 19968ull << 20)
                  .with_mig(1, 1, "7g.80gb", 81152ull << 20);
  return m;
}

NodeLabels with(NodeLabels base, const NodeLabels& more) {
  for (const auto& [k, v] : more) base[k] = v;
  return base;
}

const NodeLabels kH200 = with(kDriver580, {{"gpu.machine", "unknown"}, {"gpu.product", "NVIDIA-H200"},
                                       {"gpu.memory", "143771"},
                                       {"gpu.compute.major", "9"},
                                       {"gpu.compute.minor", "0"},
                                       {"gpu.family", "hopper"},
                                       {"mig.capable", "true"},
                                       {"mig.strategy", "none"},
                                       {"tf32", "true"},
                                       {"bf16", "true"},
                                       {"fp8", "true"},
                                       {"fp4", "false"},
                                       {"torch.wheel", "2.14.0-cu130"}, {"torch.wheel.as-of", "2026-09-18"}});

// NVML 18 (NVML_ERROR_LIB_RM_VERSION_MISMATCH): the driver was upgraded
// without a reboot, and nvmlInit fails before any GPU is read.
Machine version_mismatch() {
  Machine m;
  m.nvidia.problems.push_back({"nvml", "nvml_version_mismatch", "nvmlInit_v2 failed: Driver/library version mismatch",
                               "reboot, or reload the nvidia kernel modules"});
  m.nvidia.cuda_driver_version = 13000;  // the library's, not the loaded module's
  return m;
}

struct NodeLabelRow {
  std::string description;
  Machine machine;
  std::optional<std::string> doctor;
  NodeLabels expected;
};

TEST(NodeLabels, WholeMapPerMachine) {
  const std::vector<NodeLabelRow> rows = {
      {"no NVIDIA software: count 0 and nothing else", none(), "error",
       {{"gpu.count", "0"}, {"doctor", "error"}}},
      {"a driver/library mismatch: the GPUs are unreadable, so no GPU label, not a false count 0",
       version_mismatch(), "error", {{"doctor", "error"}}},
      {"8 measured H200s: the slowest GPU's figures, rounded", measured_h200s(), "ok",
       with(kH200, {{"gpu.count", "8"}, {"doctor", "ok"}, {"bench.bf16-tflops", "700"},
                    {"bench.h2d-gbps", "55"}})},
      {"a figure missing on one GPU: no node-wide figure", partly_measured(), std::nullopt,
       with(kH200, {{"gpu.count", "2"}})},
      {"a GPU that fell off the bus is not counted", one_lost(), "error",
       with(kH200, {{"gpu.count", "1"}, {"doctor", "error"}})},
      {"mixed consumer box: the first GPU's product, formats both share", rtx3090_4090(), "warning",
       with(kDriver580, {{"gpu.count", "2"},
                         {"doctor", "warning"},
                         {"gpu.machine", "unknown"}, {"gpu.product", "NVIDIA-GeForce-RTX-3090"},
                         {"gpu.memory", "24576"},
                         {"gpu.compute.major", "8"},
                         {"gpu.compute.minor", "6"},
                         {"gpu.family", "ampere"},
                         {"mig.capable", "false"},
                         {"mig.strategy", "none"},
                         {"tf32", "true"},
                         {"bf16", "true"},
                         {"fp8", "false"},
                         {"fp4", "false"},
                         {"torch.wheel", "2.14.0-cu130"}, {"torch.wheel.as-of", "2026-09-18"}})},
      {"A100 in MIG mode with one profile: single, and the gpu.* labels are the MIG devices', as GFD's",
       a100_mig(), std::nullopt,
       with(kDriver580, {{"gpu.count", "3"},
                         {"gpu.machine", "unknown"}, {"gpu.product", "NVIDIA-A100-SXM4-80GB-MIG-2g.20gb"},
                         {"gpu.memory", "19968"},
                         {"gpu.compute.major", "8"},
                         {"gpu.compute.minor", "0"},
                         {"gpu.family", "ampere"},
                         {"mig.capable", "true"},
                         {"mig.strategy", "single"},
                         {"tf32", "true"},
                         {"bf16", "true"},
                         {"fp8", "false"},
                         {"fp4", "false"},
                         {"torch.wheel", "2.14.0-cu130"}, {"torch.wheel.as-of", "2026-09-18"}})},
      {"two A100s with two profiles: mixed, a count and memory per profile", a100_mixed(), std::nullopt,
       with(kDriver580, {{"gpu.count", "2"},
                         {"gpu.machine", "unknown"}, {"gpu.product", "NVIDIA-A100-SXM4-80GB"},
                         {"gpu.memory", "81920"},
                         {"gpu.compute.major", "8"},
                         {"gpu.compute.minor", "0"},
                         {"gpu.family", "ampere"},
                         {"mig.capable", "true"},
                         {"mig.strategy", "mixed"},
                         {"mig-2g.20gb.count", "3"},
                         {"mig-2g.20gb.memory", "19968"},
                         {"mig-7g.80gb.count", "1"},
                         {"mig-7g.80gb.memory", "81152"},
                         {"tf32", "true"},
                         {"bf16", "true"},
                         {"fp8", "false"},
                         {"fp4", "false"},
                         {"torch.wheel", "2.14.0-cu130"}, {"torch.wheel.as-of", "2026-09-18"}})},
      {"B200: FP4", b200(), std::nullopt,
       with(kDriver580, {{"gpu.count", "1"},
                         {"gpu.machine", "unknown"}, {"gpu.product", "NVIDIA-B200"},
                         {"gpu.memory", "183359"},
                         {"gpu.compute.major", "10"},
                         {"gpu.compute.minor", "0"},
                         {"gpu.family", "blackwell"},
                         {"mig.capable", "true"},
                         {"mig.strategy", "none"},
                         {"tf32", "true"},
                         {"bf16", "true"},
                         {"fp8", "true"},
                         {"fp4", "true"},
                         {"torch.wheel", "2.14.0-cu130"}, {"torch.wheel.as-of", "2026-09-18"}})},
      {"Pascal on driver 535: no tensor cores, the cu126 wheel", gtx1080(), std::nullopt,
       {{"gpu.count", "1"},
        {"driver.major", "535"},
        {"driver.minor", "183"},
        {"driver.rev", "01"},
        {"cuda.driver.major", "535"},
        {"cuda.driver.minor", "183"},
        {"cuda.driver.rev", "01"},
        {"cuda.runtime.major", "12"},
        {"cuda.runtime.minor", "2"},
        {"gpu.machine", "unknown"}, {"gpu.product", "NVIDIA-GeForce-GTX-1080"},
        {"gpu.memory", "8192"},
        {"gpu.compute.major", "6"},
        {"gpu.compute.minor", "1"},
        {"gpu.family", "pascal"},
        {"mig.capable", "false"},
        {"mig.strategy", "none"},
        {"tf32", "false"},
        {"bf16", "false"},
        {"fp8", "false"},
        {"fp4", "false"},
        {"torch.wheel", "2.14.0-cu126"}, {"torch.wheel.as-of", "2026-09-18"}}},
  };
  for (const NodeLabelRow& r : rows) {
    NodeLabels got = node_labels(r.machine, r.doctor);
    EXPECT_EQ(got, r.expected) << r.description;
    for (const auto& [name, value] : got)
      EXPECT_TRUE(valid_label_value(value)) << r.description << ": " << name << "=" << value;
  }
}

TEST(NodeLabels, ValuesAreSanitisedAsGfdDoes) {
  EXPECT_EQ(label_value("NVIDIA H100 80GB HBM3"), "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(label_value(" (Tesla) V100/SXM2 "), "Tesla--V100-SXM2");
  EXPECT_EQ(label_value("---"), "");
  EXPECT_EQ(label_value(std::string(70, 'a') + "-b"), std::string(63, 'a'));
  EXPECT_EQ(label_value(std::string(62, 'a') + "-b"), std::string(62, 'a'));
  EXPECT_TRUE(valid_label_value(""));
  EXPECT_TRUE(valid_label_value("2.9.1-cu130"));
  EXPECT_FALSE(valid_label_value("-a"));
  EXPECT_FALSE(valid_label_value("a b"));
  EXPECT_FALSE(valid_label_value(std::string(64, 'a')));
}

TEST(NodeLabels, TheMachineIsTheDmiProductNameAsGfdLabelsIt) {
  Machine m = h200();
  m.host.product_name = "PowerEdge R750xa";
  EXPECT_EQ(node_labels(m, std::nullopt).at("gpu.machine"), "PowerEdge-R750xa");
  m.host.product_name = "To Be Filled By O.E.M.";
  EXPECT_EQ(node_labels(m, std::nullopt).at("gpu.machine"), "To-Be-Filled-By-O.E.M");
  m.host.product_name.reset();
  EXPECT_EQ(node_labels(m, std::nullopt).at("gpu.machine"), "unknown");
  EXPECT_EQ(node_labels(none(), std::nullopt).count("gpu.machine"), 0u) << "no GPU, no gpu.* labels";
}

TEST(NodeLabels, AProductNameGpuenvNeverSawStaysValid) {
  Machine m = h200();
  m.gpus[0].name = "NVIDIA \"Weird\" GPU\n=x " + std::string(80, 'z');
  NodeLabels l = node_labels(m, std::nullopt);
  EXPECT_TRUE(valid_label_value(l.at("gpu.product"))) << l.at("gpu.product");
  EXPECT_EQ(l.at("gpu.product").size(), 63u);
}

TEST(NodeLabels, FeatureFileHasTheExpiryFirstAndOneLinePerLabel) {
  std::string f = feature_file({{"gpu.count", "0"}, {"doctor", "ok"}}, "2026-11-29T12:05:00Z");
  EXPECT_EQ(f,
            "# Written by gpuenv labels for Node Feature Discovery's local source.\n"
            "# +expiry-time=2026-11-29T12:05:00Z\n"
            "gpuenv.dev/doctor=ok\n"
            "gpuenv.dev/gpu.count=0\n");
}

TEST(NodeLabels, AFullNodeFitsNfdsLimit) {
  Machine m = measured_h200s();
  EXPECT_LT(feature_file(node_labels(m, "warning"), "2026-11-29T12:05:00Z").size(),
            kFeatureFileLimit / 16);
}

// Issue 21: stored bench figures are input like any file; a value that is
// no label value is left out, and said.
TEST(NodeLabels, AStoredFigureThatIsNoLabelValueIsDroppedAndSaid) {
  struct NodeLabelRow {
    double bf16, h2d;
    std::vector<std::string> dropped;
  };
  const double nan = std::nan(""), inf = HUGE_VAL;
  std::vector<NodeLabelRow> rows = {
      {-5, 55.4, {"bench.bf16-tflops=-5: not a Kubernetes label value"}},
      {-9223372036854775808.0, 1e300,
       {"bench.bf16-tflops=-9223372036854775808: not a Kubernetes label value",
        "bench.h2d-gbps=1000000000000000052"}},  // 1e300: 301 digits
      {nan, inf, {"bench.bf16-tflops=nan: not a finite figure", "bench.h2d-gbps=inf: not a finite figure"}},
      {780, -0.4, {"bench.h2d-gbps=-0: not a Kubernetes label value"}},
  };
  for (const NodeLabelRow& r : rows) {
    Machine m = h200();
    m.measurements.push_back(figure(m.gpus[0], "gemm_bf16_8192", r.bf16, "TFLOP/s"));
    m.measurements.push_back(figure(m.gpus[0], "h2d_pinned", r.h2d, "GB/s"));
    std::vector<std::string> dropped;
    NodeLabels l = node_labels(m, "ok", &dropped);
    for (const auto& [name, value] : l) EXPECT_TRUE(valid_label_value(value)) << name << "=" << value;
    ASSERT_EQ(dropped.size(), r.dropped.size()) << r.bf16;
    for (size_t i = 0; i < dropped.size(); ++i)
      EXPECT_EQ(dropped[i].rfind(r.dropped[i], 0), 0u) << dropped[i];
    EXPECT_EQ(l.count("bench.bf16-tflops"), r.bf16 == 780 ? 1u : 0u);
    EXPECT_EQ(l.count("gpu.count"), 1u);
  }
}

}  // namespace
}  // namespace gpuenv
