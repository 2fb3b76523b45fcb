// Issue 39's wheel advice, as doctor and labels give it: current (2.14),
// never a downgrade, one decision for both, and never a reinstall of a
// pre-release, local or vendor (NGC) build. The rows are machines.
#include <gtest/gtest.h>

#include "builders.h"
#include "decide/node_labels.h"
#include "diagnose/doctor.h"
#include "rule_expect.h"
#include "text_files.h"

namespace gpuenv {
namespace {

using namespace gpuenv::testing;

// The single finding of `check` on `m`, as "status: seen | fix".
std::string finding(CheckFn check, const Machine& m) {
  std::vector<Finding> got = check(m, options_for(m));
  if (got.size() != 1) return "expected one finding, got " + std::to_string(got.size());
  return std::string(status_name(got[0].status)) + ": " + got[0].seen + " | " + got[0].fix;
}

// libtorch_cuda.so carrying `targets`.
Machine with_libtorch(MachineBuilder b, std::vector<std::string> targets) {
  Machine m = b;
  m.torch->libtorch_cuda = CudaBinary{m.torch->path.value_or("") + "/lib/libtorch_cuda.so", "torch",
                                      std::move(targets), std::nullopt, std::nullopt};
  return m;
}

const std::vector<std::string> kCu13Targets = {"sm_100", "sm_120", "sm_75", "sm_80", "sm_86", "sm_90"};

// Issue 39, item 1: torch 2.14.0+cu130 on a V100 gets 2.14.0's own cu126
// build, not 2.12.1's.
TEST(WheelAdvice, V100WithTorch214GetsItsOwnCu126) {
  Machine m = with_libtorch(machine::v100().torch("2.14.0+cu130", "13.0"), kCu13Targets);
  std::string got = finding(check_kernels, m);
  EXPECT_TRUE(contains(got, "error: libtorch_cuda.so carries")) << got;
  EXPECT_TRUE(contains(got, "pip install --force-reinstall torch==2.14.0 --index-url "
                       "https://download.pytorch.org/whl/cu126")) << got;
  EXPECT_FALSE(contains(got, "2.12.1")) << got;
}

// Item 2: a torch newer than the table keeps its version; the advice says
// where the table ends and when.
TEST(WheelAdvice, ATorchNewerThanTheTableIsNeverDowngraded) {
  const std::string table_end = "gpuenv's wheel table ends at torch 2.14 (sources up to 2026-09-18)";
  Machine future = with_libtorch(machine::v100().torch("2.99.0+cu140", "14.0"), {"sm_100", "sm_120", "sm_90"});
  std::string kernels = finding(check_kernels, future);
  EXPECT_TRUE(contains(kernels, "pip install --force-reinstall torch==2.99.0 --index-url "
                           "https://download.pytorch.org/whl/cu126 (" + table_end)) << kernels;
  std::string driver = finding(check_driver_compat, future);
  EXPECT_TRUE(contains(driver, "torch==2.99.0")) << driver;
  EXPECT_TRUE(contains(driver, table_end)) << driver;
  for (const std::string& text : {kernels, driver})
    for (const char* older : {"torch==2.14.", "torch==2.13.", "torch==2.12.", "torch==2.9."})
      EXPECT_FALSE(contains(text, older)) << text;
  Machine kepler = MachineBuilder()
                       .gpus(GpuModel{"Tesla K80", {3, 7}, 12ull << 30, 3, 16, 150000, 875, 2505, 0})
                       .driver("470.256.02", 11040)
                       .torch("2.99.0+cpu");
  std::string none = finding(check_torch, kepler);
  EXPECT_TRUE(contains(none, "torch 2.99.0 is past the table (" + table_end + ")")) << none;
  EXPECT_FALSE(contains(none, "pip install")) << none;
}

// Item 3: `labels` publishes the wheel doctor advises, and with that wheel
// installed doctor is content: one decision, the driver's CUDA its ceiling.
TEST(WheelAdvice, LabelsAndDoctorGiveOneAnswer) {
  struct Case {
    const char* what;
    MachineBuilder machine;
    std::string label;
  } cases[] = {
      {"H200, driver 580.159.04 (CUDA 13.0)", machine::h200().driver("580.159.04", 13000), "2.14.0-cu130"},
      {"H200, driver 595.45.04 (CUDA 13.2)", machine::h200().driver("595.45.04", 13020), "2.14.0-cu132"},
      {"V100, driver 580", machine::v100(), "2.14.0-cu126"},
      {"8x A100 (DGX), driver 580.95.05", machine::a100_nvlink_8(), "2.14.0-cu130"},
      {"H100, driver 570 (CUDA 12.8)", machine::h100().driver("570.124.06", 12080), "2.14.0-cu126"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Machine m = c.machine;
    std::string label = node_labels(m, std::nullopt)["torch.wheel"];
    EXPECT_EQ(label, c.label);
    std::string variant = label.substr(label.find('-') + 1);
    std::string cuda = variant.substr(2, variant.size() - 3) + "." + variant.substr(variant.size() - 1);
    m.torch = Machine(MachineBuilder().torch(label.substr(0, label.find('-')) + "+" + variant, cuda)).torch;
    std::string got = finding(check_driver_compat, m);
    EXPECT_TRUE(contains(got, "ok: ")) << got;
    EXPECT_FALSE(contains(got, "upgrade")) << got;
  }
}

// Item 3, the issue's own case: the cu132 wheel the label used to publish
// is installed; doctor's alternative to a driver upgrade is the label's.
TEST(WheelAdvice, Cu132OnDriver580NamesTheLabelsWheel) {
  Machine m = machine::h200().driver("580.159.04", 13000).torch("2.12.1+cu132", "13.2");
  EXPECT_EQ(node_labels(m, std::nullopt)["torch.wheel"], "2.14.0-cu130");
  std::string got = finding(check_driver_compat, m);
  EXPECT_TRUE(contains(got, "warning: torch 2.12.1+cu132 bundles CUDA 13.2; driver 580.159.04 supports CUDA 13.0: "
                       "it runs through minor-version compatibility")) << got;
  EXPECT_TRUE(contains(got, "upgrade the NVIDIA driver to 595.45.04 or newer, or install torch 2.12.1+cu130: "
                       "pip install --force-reinstall torch==2.12.1 --index-url "
                       "https://download.pytorch.org/whl/cu130")) << got;
}

// Item 4: NGC's torch (CUDA 13.1) is recognised: no driver upgrade on an
// R580 driver newer than 580.65.06, and never a pip install of it.
TEST(WheelAdvice, NgcTorchIsNeverReinstalled) {
  const std::string ngc = "2.10.0a0+3e8e2a4.nv25.12";
  struct Case {
    const char* what;
    CheckFn check;
    Machine machine;
    std::string want;
  } cases[] = {
      {"H200, driver 580.159.04: runs by minor-version compatibility", check_driver_compat,
       machine::h200().driver("580.159.04", 13000).torch(ngc, "13.1"),
       "ok: torch " + ngc + " bundles CUDA 13.1; driver 580.159.04 supports CUDA 13.0: it runs through "
       "minor-version compatibility"},
      {"DGX A100, driver 580.95.05", check_driver_compat, machine::a100_nvlink_8().torch(ngc, "13.1"),
       "ok: torch " + ngc},
      {"H200, driver 550: the driver its CUDA major needs, no reinstall", check_driver_compat,
       machine::h200().driver("550.54.15", 12040).torch(ngc, "13.1"),
       "a driver of CUDA 13's branch (580.65.06 or newer) runs it; torch " + ngc + " is NVIDIA's build (NGC"},
      {"its libtorch lacks the GPU: an NGC release for it, not pip", check_kernels,
       with_libtorch(machine::v100().torch(ngc, "13.1"), kCu13Targets), "use an NGC PyTorch release made for"},
      {"a CUDA build: ok", check_torch, machine::a100_nvlink_8().torch(ngc, "13.1"), "ok: torch " + ngc},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::string got = finding(c.check, c.machine);
    EXPECT_TRUE(contains(got, c.want)) << got;
    EXPECT_FALSE(contains(got, "pip install")) << got;
    EXPECT_FALSE(contains(got, "upgrade the NVIDIA driver")) << got;
    EXPECT_FALSE(contains(got, "580.65.06 or newer,")) << got;
  }
}

}  // namespace
}  // namespace gpuenv
