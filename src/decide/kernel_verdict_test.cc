#include "decide/kernel_verdict.h"

#include <gtest/gtest.h>

#include "builders.h"
#include "fatbin_builders.h"

namespace gpuenv {
namespace {

namespace machine = testing::machine;
namespace models = testing::models;
using V = KernelVerdict;
using testing::fatbin::Fatbin;
using testing::fatbin::parsed_file;

// A GPU's index and verdict as one line: "0 ptx_jit compute_89 no_image=1 jit=1".
std::string said(const GpuVerdict& v) {
  std::string out = std::to_string(v.gpu->index) + " ";
  if (!v.compat) return out + "unknown";
  out += verdict_name(v.compat->verdict);
  if (v.compat->image) out += " " + kernel_target_name(*v.compat->image);
  if (v.fatbins_without_image) out += " no_image=" + std::to_string(v.fatbins_without_image);
  if (v.fatbins_jit) out += " jit=" + std::to_string(v.fatbins_jit);
  return out;
}

// GPUs 0..n-1 each saying `verdict`.
std::vector<std::string> each(int n, const std::string& verdict) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(std::to_string(i) + " " + verdict);
  return out;
}

Machine with(testing::GpuModel model, ComputeCapability cc, std::string name) {
  model.cc = cc;
  model.name = std::move(name);
  return testing::MachineBuilder().gpus(model);
}

Machine b300() { return with(models::b200(), {10, 3}, "NVIDIA B300"); }
Machine thor() { return with(models::jetson_orin(), {11, 0}, "Thor"); }

// An H200 beside a GPU whose capability was not sensed.
Machine h200_and_unknown() {
  Machine m = machine::h200(2);
  m.gpus[1].compute_capability.reset();
  return m;
}

TEST(KernelVerdict, Table) {
  struct Row {
    std::string what;
    Machine m;
    std::vector<Fatbin> fatbins;
    std::vector<std::string> gpus;  // said() per GPU, in the Machine's order
    std::optional<V> worst;
  } rows[] = {
      // clang-format off
      // Cubins by compute capability family.
      {"exact cubin", machine::h200(), {{{"sm_80", "sm_90", "compute_90@9.0"}}}, {"0 native sm_90"}, V::kNative},
      {"later minor, same major", machine::rtx3090_4090(), {{{"sm_80"}}}, {"0 native sm_80", "1 native sm_80"}, V::kNative},
      {"the highest minor that fits", machine::rtx3090_4090(), {{{"sm_80", "sm_86"}}}, {"0 native sm_86", "1 native sm_86"}, V::kNative},
      {"no cubin across majors", machine::h200(), {{{"sm_80"}}}, {"0 cannot_run no_image=1"}, V::kCannotRun},
      {"sm_90a on its own 9.0", machine::h200(), {{{"sm_90a"}}}, {"0 native sm_90a"}, V::kNative},
      {"sm_90a on 10.0", machine::b200(), {{{"sm_90a"}}}, {"0 cannot_run no_image=1"}, V::kCannotRun},
      {"sm_100a on 10.0", machine::b200(), {{{"sm_100a"}}}, {"0 native sm_100a"}, V::kNative},
      {"sm_100a not on 10.3", b300(), {{{"sm_100a"}}}, {"0 cannot_run no_image=1"}, V::kCannotRun},
      {"sm_100f on its family's 10.3", b300(), {{{"sm_100f"}}}, {"0 native sm_100f"}, V::kNative},
      {"sm_100f not on 12.0", machine::rtx5090(), {{{"sm_100f"}}}, {"0 cannot_run no_image=1"}, V::kCannotRun},
      {"sm_100f not on Thor's 11.0", thor(), {{{"sm_100f", "sm_100"}}}, {"0 cannot_run no_image=1"}, V::kCannotRun},
      {"Tegra: no discrete cubin", machine::jetson_orin(), {{{"sm_75", "sm_86"}}}, {"0 cannot_run no_image=1"}, V::kCannotRun},
      // PTX: JIT for any capability at or above its own.
      {"PTX only", machine::h200(), {{{"compute_80@7.0"}}}, {"0 ptx_jit compute_80 jit=1"}, V::kPtxJit},
      {"PTX for a newer GPU", machine::a100_nvlink_8(), {{{"compute_90@9.0"}}}, each(8, "cannot_run no_image=1"), V::kCannotRun},
      {"a cubin beats newer PTX", machine::rtx3090_4090(), {{{"sm_86", "compute_89@8.1"}}}, {"0 native sm_86", "1 native sm_86"}, V::kNative},
      {"no 12.0 cubin: PTX JIT", machine::rtx5090(), {{{"sm_80", "sm_90", "compute_90@9.0"}}}, {"0 ptx_jit compute_90 jit=1"}, V::kPtxJit},
      {"compute_90a only on 9.0", machine::b200(), {{{"compute_90a@9.0", "compute_80@9.0"}}}, {"0 ptx_jit compute_80 jit=1"}, V::kPtxJit},
      // Not judged (docs/inspect.md): PTX whose ISA the driver is too old to
      // compile (ISA 9.0 is CUDA 13; this driver is CUDA 12.2) still reads as
      // JIT-able; doctor's driver check covers the toolkit.
      {"PTX newer than the driver", machine::h200().driver("535.183.01", 12020), {{{"compute_90@9.0"}}}, {"0 ptx_jit compute_90 jit=1"}, V::kPtxJit},
      // Mixed GPUs: each its own verdict; the worst decides.
      {"mixed: one GPU refused", machine::rtx3090_4090(), {{{"sm_89"}}}, {"0 cannot_run no_image=1", "1 native sm_89"}, V::kCannotRun},
      {"mixed: one GPU by JIT", machine::rtx3090_4090(), {{{"sm_89", "compute_86@7.8"}}}, {"0 ptx_jit compute_86 jit=1", "1 native sm_89"}, V::kPtxJit},
      {"unknown capability is not judged", h200_and_unknown(), {{{"sm_90"}}}, {"0 native sm_90", "1 unknown"}, V::kNative},
      // Per fatbin: each module is loaded on its own.
      {"one fatbin has no image", machine::h200(), {{{"sm_89", "compute_89@8.1"}}, {{"sm_89"}}}, {"0 ptx_jit compute_89 no_image=1 jit=1"}, V::kPtxJit},
      {"native, one fatbin by JIT", machine::h200(), {{{"sm_90"}}, {{"compute_90@9.0"}}}, {"0 native sm_90 jit=1"}, V::kNative},
      {"sm_90a kernels on an A100", machine::a100_nvlink_8(), {{{"sm_80"}}, {{"sm_90a"}}}, each(8, "native sm_80 no_image=1"), V::kNative},
      {"a fatbin of LTO-IR only counts for nothing", machine::h200(), {{{"sm_90"}}, {{"lto_90"}}}, {"0 native sm_90"}, V::kNative},
      // Files without loadable code, and sections.
      {"no CUDA code", machine::h200(), {}, {}, std::nullopt},
      {"no GPU", machine::none(), {{{"sm_90"}}}, {}, std::nullopt},
      {"LTO-IR only: nothing loadable", machine::h200(), {{{"lto_90"}}}, {"0 cannot_run"}, V::kCannotRun},
      {"-rdc object: __nv_relfatbin judged", machine::h200(), {{{"sm_80", "compute_80@8.8"}, true}}, {"0 ptx_jit compute_80 jit=1"}, V::kPtxJit},
      {"__nv_relfatbin beside .nv_fatbin: not judged", machine::h200(), {{{"sm_90"}}, {{"sm_80"}, true}}, {"0 native sm_90"}, V::kNative},
      // clang-format on
  };
  for (const Row& r : rows) {
    BinaryVerdict v = judge_binary(parsed_file(r.fatbins), r.m);
    std::vector<std::string> got;
    for (const GpuVerdict& g : v.gpus) got.push_back(said(g));
    EXPECT_EQ(got, r.gpus) << r.what;
    EXPECT_EQ(worst_verdict(v), r.worst) << r.what;
    for (const GpuVerdict& g : v.gpus) EXPECT_EQ(g.gpu, &r.m.gpus[&g - v.gpus.data()]) << r.what;
  }
}

TEST(KernelVerdict, CountsPerTargetInRowOrder) {
  FatbinFile f =
      parsed_file({{{"compute_90@9.0*", "sm_90a", "sm_80*", "lto_90", "sm_90", "compute_90@8.8"}},
                   {{"sm_80", "sm_100f", "lto_80"}},
                   {{"sm_75"}, true}});
  f.entries[3].kind = 7;  // a kind gpuenv does not know: after LTO-IR
  BinaryVerdict v = judge_binary(f, machine::h200());
  EXPECT_FALSE(v.relocatable);
  EXPECT_EQ(v.used.fatbins, 2);
  EXPECT_EQ(v.used.entries, 9);
  EXPECT_EQ(v.used.compressed, 2);
  std::vector<std::string> rows;
  for (const auto& [key, t] : v.used.targets) {
    std::string isa;
    for (const auto& [major, minor] : t.isa)
      isa += " " + std::to_string(major) + "." + std::to_string(minor);
    rows.push_back(t.name + " x" + std::to_string(t.count) + " z" + std::to_string(t.compressed) +
                   isa);
  }
  EXPECT_EQ(rows, (std::vector<std::string>{"sm_80 x2 z1", "sm_90 x1 z0", "sm_90a x1 z0",
                                            "sm_100f x1 z0", "compute_90 x2 z1 8.8 9.0",
                                            "lto_80 x1 z0", "kind7_90 x1 z0"}));
  ASSERT_TRUE(v.device_link);
  EXPECT_EQ(v.device_link->fatbins, 1);
  EXPECT_EQ(v.device_link->targets.begin()->second.name, "sm_75");
}

}  // namespace
}  // namespace gpuenv
