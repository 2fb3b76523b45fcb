#include "decide/kernel_compat.h"

#include <gtest/gtest.h>

namespace gpuenv {
namespace {

// "sm_90a" / "compute_100f" -> KernelTarget.
KernelTarget t(const std::string& name) {
  bool ptx = name.rfind("compute_", 0) == 0;
  std::string rest = name.substr(ptx ? 8 : 3);
  TargetVariant v = TargetVariant::kPlain;
  if (rest.back() == 'a') v = TargetVariant::kArchSpecific;
  if (rest.back() == 'f') v = TargetVariant::kFamily;
  if (v != TargetVariant::kPlain) rest.pop_back();
  return {ptx, cc_from_arch(std::stoi(rest)), v};
}

std::vector<KernelTarget> ts(const std::vector<std::string>& names) {
  std::vector<KernelTarget> out;
  for (const auto& n : names) out.push_back(t(n));
  return out;
}

TEST(KernelCompat, Names) {
  EXPECT_EQ(cc_from_arch(90), (ComputeCapability{9, 0}));
  EXPECT_EQ(cc_from_arch(121), (ComputeCapability{12, 1}));
  for (const char* n : {"sm_80", "sm_90a", "sm_100f", "compute_90", "compute_100a", "compute_120f"})
    EXPECT_EQ(kernel_target_name(t(n)), n);
  EXPECT_EQ(verdict_name(KernelVerdict::kNative), "native");
  EXPECT_EQ(verdict_name(KernelVerdict::kPtxJit), "ptx_jit");
  EXPECT_EQ(verdict_name(KernelVerdict::kCannotRun), "cannot_run");
}

TEST(KernelCompat, Table) {
  using V = KernelVerdict;
  struct Row {
    std::vector<std::string> targets;
    ComputeCapability gpu;
    V verdict;
    std::string image;  // "" for none
  } rows[] = {
      // Cubins: same major, minor <= the GPU's.
      {{"sm_80"}, {8, 0}, V::kNative, "sm_80"},
      {{"sm_80"}, {8, 6}, V::kNative, "sm_80"},
      {{"sm_80"}, {8, 9}, V::kNative, "sm_80"},
      {{"sm_86"}, {8, 0}, V::kCannotRun, ""},
      {{"sm_80"}, {9, 0}, V::kCannotRun, ""},
      {{"sm_90"}, {10, 0}, V::kCannotRun, ""},
      {{"sm_100"}, {10, 3}, V::kNative, "sm_100"},
      {{"sm_120"}, {12, 1}, V::kNative, "sm_120"},
      // The best cubin: the exact capability, else the highest minor.
      {{"sm_80", "sm_86"}, {8, 9}, V::kNative, "sm_86"},
      {{"sm_86", "sm_89", "sm_80"}, {8, 6}, V::kNative, "sm_86"},
      {{"sm_90", "sm_90a"}, {9, 0}, V::kNative, "sm_90a"},
      // A cubin beats PTX, even a newer PTX.
      {{"sm_80", "compute_86"}, {8, 6}, V::kNative, "sm_80"},
      // Arch-specific (a): only the exact capability.
      {{"sm_90a"}, {9, 0}, V::kNative, "sm_90a"},
      {{"sm_100a"}, {10, 0}, V::kNative, "sm_100a"},
      {{"sm_100a"}, {10, 3}, V::kCannotRun, ""},
      {{"sm_90a"}, {10, 0}, V::kCannotRun, ""},
      {{"sm_120a"}, {12, 1}, V::kCannotRun, ""},
      // Family-specific (f): same major, minor >=.
      {{"sm_100f"}, {10, 0}, V::kNative, "sm_100f"},
      {{"sm_100f"}, {10, 3}, V::kNative, "sm_100f"},
      {{"sm_103f"}, {10, 0}, V::kCannotRun, ""},
      {{"sm_100f"}, {11, 0}, V::kCannotRun, ""},
      {{"sm_100f"}, {12, 0}, V::kCannotRun, ""},
      {{"sm_120f"}, {12, 1}, V::kNative, "sm_120f"},
      // Tegra: no binary compatibility with discrete parts, either way.
      {{"sm_86"}, {8, 7}, V::kCannotRun, ""},
      {{"sm_80"}, {8, 7}, V::kCannotRun, ""},
      {{"sm_87"}, {8, 7}, V::kNative, "sm_87"},
      {{"sm_87"}, {8, 9}, V::kCannotRun, ""},
      {{"sm_72"}, {7, 5}, V::kCannotRun, ""},
      {{"sm_100"}, {10, 1}, V::kCannotRun, ""},
      {{"sm_80", "compute_80"}, {8, 7}, V::kPtxJit, "compute_80"},
      // PTX: any capability >= its own; the highest that fits is compiled.
      {{"compute_90"}, {9, 0}, V::kPtxJit, "compute_90"},
      {{"sm_80", "sm_90", "compute_90"}, {12, 0}, V::kPtxJit, "compute_90"},
      {{"compute_75", "compute_86"}, {9, 0}, V::kPtxJit, "compute_86"},
      {{"compute_75", "compute_86"}, {8, 0}, V::kPtxJit, "compute_75"},
      {{"compute_90"}, {8, 6}, V::kCannotRun, ""},
      {{"sm_80", "compute_80"}, {7, 5}, V::kCannotRun, ""},
      // Arch- and family-specific PTX keep their limits.
      {{"compute_90a"}, {9, 0}, V::kPtxJit, "compute_90a"},
      {{"compute_90a"}, {10, 0}, V::kCannotRun, ""},
      {{"compute_100f"}, {10, 3}, V::kPtxJit, "compute_100f"},
      {{"compute_100f"}, {11, 0}, V::kCannotRun, ""},
      {{"compute_100f"}, {12, 0}, V::kCannotRun, ""},
      {{"sm_90a", "compute_90a", "compute_80"}, {10, 0}, V::kPtxJit, "compute_80"},
      // Nothing at all.
      {{}, {9, 0}, V::kCannotRun, ""},
  };
  for (const Row& r : rows) {
    std::string what;
    for (const auto& n : r.targets) what += n + " ";
    what += "on " + std::to_string(r.gpu.major) + "." + std::to_string(r.gpu.minor);
    KernelCompat c = kernel_compat(ts(r.targets), r.gpu);
    EXPECT_EQ(verdict_name(c.verdict), verdict_name(r.verdict)) << what << ": " << c.reason;
    EXPECT_EQ(c.image ? kernel_target_name(*c.image) : "", r.image) << what;
  }
}

TEST(KernelCompat, ReasonsSayWhatToExpect) {
  KernelCompat native = kernel_compat(ts({"sm_80"}), {8, 6});
  EXPECT_EQ(native.reason,
            "runs the sm_80 cubin natively (cubins run on later minor revisions of the same major)");
  EXPECT_EQ(kernel_compat(ts({"sm_90a"}), {9, 0}).reason, "runs the sm_90a cubin natively");

  KernelCompat jit = kernel_compat(ts({"sm_90", "compute_90"}), {12, 0});
  EXPECT_NE(jit.reason.find("no cubin for 12.0"), std::string::npos) << jit.reason;
  EXPECT_NE(jit.reason.find("compute_90 PTX"), std::string::npos) << jit.reason;
  EXPECT_NE(jit.reason.find("slow first start"), std::string::npos) << jit.reason;
  EXPECT_NE(jit.reason.find("CUDA_CACHE_MAXSIZE"), std::string::npos) << jit.reason;

  KernelCompat none = kernel_compat(ts({"sm_90a", "sm_100f", "sm_90a"}), {8, 0});
  EXPECT_EQ(none.reason,
            "no cubin or PTX usable on 8.0 (it has: sm_90a, sm_100f); launching a kernel fails "
            "with \"no kernel image is available for execution on the device\"");
  EXPECT_NE(kernel_compat({}, {8, 0}).reason.find("(it has: none)"), std::string::npos);
}

TEST(KernelCompat, PredicatesDirectly) {
  EXPECT_TRUE(cubin_runs_on(t("sm_100f"), {10, 3}));
  EXPECT_FALSE(cubin_runs_on(t("sm_103f"), {10, 0}));
  EXPECT_FALSE(cubin_runs_on(t("sm_103"), {10, 0}));
  EXPECT_TRUE(ptx_jits_for(t("compute_50"), {12, 1}));
  EXPECT_FALSE(ptx_jits_for(t("compute_121"), {12, 0}));
  EXPECT_TRUE(ptx_jits_for(t("compute_120f"), {12, 1}));
}

}  // namespace
}  // namespace gpuenv
