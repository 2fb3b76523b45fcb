#include <gtest/gtest.h>

#include "decide/rules/rules.h"
#include "rule_expect.h"

namespace gpuenv {
namespace {

using namespace gpuenv::testing;


RuleCase caches_root(const std::string& cache_root, RuleCase c) {
  c.cache_root = cache_root;
  return c;
}

Machine torch(Machine m, const std::string& version, const std::string& cuda) {
  m.torch.emplace();
  m.torch->version = version;
  if (!cuda.empty()) m.torch->cuda_version = cuda;
  return m;
}
Machine cu130(Machine m) { return torch(std::move(m), "2.11.0+cu130", "13.0"); }
Machine cu128(Machine m) { return torch(std::move(m), "2.10.0+cu128", "12.8"); }
Machine cu126(Machine m) { return torch(std::move(m), "2.8.0+cu126", "12.6"); }
Machine cu124(Machine m) { return torch(std::move(m), "2.5.1+cu124", "12.4"); }

Env dirs(const std::string& key, const std::string& caches_root = "/cache") {
  return {{"CUDA_CACHE_PATH", caches_root + "/cuda/" + key},
          {"TORCHINDUCTOR_CACHE_DIR", caches_root + "/inductor/" + key},
          {"TRITON_CACHE_DIR", caches_root + "/triton/" + key}};
}

Env jit(Env e) {
  e["CUDA_CACHE_MAXSIZE"] = "4294967296";
  return e;
}

std::vector<RuleCase> caches_machines() {
  // clang-format off
  return {
      {"GTX 1080, cu126: sm_60 SASS runs on 6.1", cu126(machine::gtx1080()), {}, dirs("sm61")},
      {"GTX 1080, cu128: no code at all", cu128(machine::gtx1080()),
       {}, dirs("sm61"),
       {{kWarn, "torch 2.10.0+cu128 carries neither SASS nor usable PTX for NVIDIA GeForce GTX 1080"}}},
      {"V100, cu126", cu126(machine::v100()), {}, dirs("sm70")},
      {"V100, cu128: only some releases carry sm_70, and no PTX fits", cu128(machine::v100()),
       {}, dirs("sm70")},
      {"V100, cu130: CUDA 13 dropped Volta", cu130(machine::v100()),
       {}, dirs("sm70"), {{kWarn, "no kernel image is available"}}},
      {"T4, cu130", cu130(machine::t4()), {}, dirs("sm75")},
      {"A10, cu126", cu126(machine::a10()), {}, dirs("sm86")},
      {"8x A100 NVLink, cu128", cu128(machine::a100_nvlink_8()), {}, dirs("sm80")},
      {"A100 MIG, cu130", cu130(machine::a100_mig()), {}, dirs("sm80")},
      {"RTX 3090 + 4090, cu130", cu130(machine::rtx3090_4090()), {}, dirs("sm86-sm89")},
      {"CUDA_VISIBLE_DEVICES=1 keeps the 4090", cu130(machine::rtx3090_4090()),
       {{"CUDA_VISIBLE_DEVICES", "1"}}, dirs("sm89")},
      {"L4, cu118: sm_86 SASS runs on 8.9", torch(machine::l4(), "2.3.1+cu118", "11.8"),
       {}, dirs("sm89")},
      {"H100, cu130", cu130(machine::h100()), {}, dirs("sm90")},
      {"H200, cu126", cu126(machine::h200()), {}, dirs("sm90")},
      {"B200, cu128", cu128(machine::b200()), {}, dirs("sm100")},
      {"B200, cu126: no Blackwell SASS, no PTX", cu126(machine::b200()),
       {}, dirs("sm100"), {{kWarn, "carries neither SASS nor usable PTX for NVIDIA B200"}}},
      {"B200, cu124: JIT from compute_90 PTX", cu124(machine::b200()), {}, jit(dirs("sm100"))},
      {"RTX 5090, cu128", cu128(machine::rtx5090()), {}, dirs("sm120")},
      {"RTX 5090, cu126", cu126(machine::rtx5090()),
       {}, dirs("sm120"),
       {{kWarn, "carries neither SASS nor usable PTX for NVIDIA GeForce RTX 5090"}}},
      {"RTX 5090, cu124", cu124(machine::rtx5090()), {}, jit(dirs("sm120"))},
      {"a GPU beyond the table, cu130: JIT from compute_120 PTX", cu130(one_gpu("next", {13, 0})),
       {}, jit(dirs("sm130"))},
      {"B300, cu128: sm_100 SASS runs on 10.3", cu128(one_gpu("NVIDIA B300", {10, 3})),
       {}, dirs("sm103")},
      {"GB10, cu130: sm_120 SASS runs on 12.1", cu130(one_gpu("NVIDIA GB10", {12, 1})),
       {}, dirs("sm121")},
      {"Thor, cu130 (aarch64 wheel carries sm_110)", cu130(one_gpu("NVIDIA Thor", {11, 0})),
       {}, dirs("sm110")},
      {"Thor, cu129", torch(one_gpu("NVIDIA Thor", {11, 0}), "2.9.0+cu129", "12.9"),
       {}, dirs("sm110"), {{kWarn, "no kernel image"}}},
      {"Jetson Orin, JetPack torch", torch(machine::jetson_orin(), "2.5.0a0+872d972e41.nv24.08", "12.6"),
       {}, dirs("sm87"), {{kInfo, "torch 2.5.0a0+872d972e41.nv24.08 is not an official wheel"}}},
      {"no GPU", cu130(machine::none()), {}, {}},
  };
  // clang-format on
}

std::vector<RuleCase> edges() {
  // clang-format off
  return {
      caches_root("", {"no cache root: nothing", cu130(machine::h100()), {}, {}}),
      caches_root("/cache/", {"trailing slash on the root", cu130(machine::h100()), {}, dirs("sm90")}),
      caches_root("/", {"root is /", cu130(machine::h100()), {}, dirs("sm90", "")}),
      {"no torch: no MAXSIZE, said", machine::h100(),
       {}, dirs("sm90"),
       {{kInfo, "CUDA_CACHE_MAXSIZE left at the driver default: no torch found"}}},
      {"CPU torch", torch(machine::h100(), "2.11.0+cpu", ""),
       {}, dirs("sm90"), {{kInfo, "torch 2.11.0+cpu is a CPU build"}}},
      {"source build", torch(machine::h100(), "2.12.0a0+gitabc1234", "13.0"),
       {}, dirs("sm90"), {{kInfo, "is not an official wheel"}}},
      {"unknown CUDA variant", torch(machine::h100(), "2.13.0+cu134", "13.4"),
       {}, dirs("sm90"), {{kInfo, "gpuenv has no arch table for cu134 wheels"}}},
      {"PyPI wheel without a local label", torch(machine::b200(), "2.11.0", "13.0"),
       {}, dirs("sm100")},
      {"capability not sensed", without_cc(cu130(machine::h100())),
       {}, {},
       {{kWarn, "caches left alone: the compute capability of NVIDIA H100 80GB HBM3 (cc unknown)"}}},
      {"CUDA_VISIBLE_DEVICES hides every GPU", cu130(machine::h100()),
       {{"CUDA_VISIBLE_DEVICES", ""}}, {}},
  };
  // clang-format on
}

void run_caches(const std::vector<RuleCase>& rows) { run_table(rule_caches, rows); }

TEST(Caches, Machines) { run_caches(caches_machines()); }
TEST(Caches, Edges) { run_caches(edges()); }

TEST(Caches, MaxsizeReasonNamesOnlyTheJitGpus) {
  Machine m = cu124(MachineBuilder().gpus(models::h100()).gpus(models::rtx5090()));
  run_table(rule_caches, {{"H100 + RTX 5090, cu124", m, {}, jit(dirs("sm90-sm120"))}});
  Decision d = rule_caches(m, options_for(m));
  const Setting* s = find_setting(d, "CUDA_CACHE_MAXSIZE");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->reason,
            "torch 2.5.1+cu124 may lack SASS for NVIDIA GeForce RTX 5090 (Blackwell, 12.0); its "
            "kernels then JIT-compile from compute_90 PTX, kept by the driver's 4 GiB maximum");
}

TEST(Caches, ARefusedRootSetsNothingAndSaysWhy) {
  Machine m = cu130(machine::h100());
  Options o = options_for(m);
  o.cache_root_refused = "/shared is writable by everyone without the sticky bit";
  o.cache_root.clear();  // as Context::plan_options does
  Decision d = rule_caches(m, o);
  RuleCase want{"a refused cache root", m, {}, {},
                {{Severity::kWarning, "caches left alone: /shared is writable by everyone without the sticky bit"}}};
  expect_settings(d, want);
  expect_notes(d, want);
}

}  // namespace
}  // namespace gpuenv
