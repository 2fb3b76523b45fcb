#include <gtest/gtest.h>

#include "decide/rule_test_support.h"
#include "decide/rules.h"

namespace gpuenv {
namespace {

using namespace gpuenv::testing;

struct Row {
  std::string description;
  Machine machine;
  Env env;
  std::string cache_root;
  Env expected;
  std::vector<std::string> notes;
};

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

Env dirs(const std::string& key, const std::string& root = "/cache") {
  return {{"CUDA_CACHE_PATH", root + "/cuda/" + key},
          {"TORCHINDUCTOR_CACHE_DIR", root + "/inductor/" + key},
          {"TRITON_CACHE_DIR", root + "/triton/" + key}};
}

Env jit(Env e) {
  e["CUDA_CACHE_MAXSIZE"] = "4294967296";
  return e;
}

std::vector<Row> machines() {
  // clang-format off
  return {
      {"GTX 1080, cu126: sm_60 SASS runs on 6.1", cu126(machine::gtx1080()), {}, "/cache",
       dirs("sm61"), {}},
      {"GTX 1080, cu128: no code at all", cu128(machine::gtx1080()), {}, "/cache", dirs("sm61"),
       {"torch 2.10.0+cu128 carries neither SASS nor usable PTX for NVIDIA GeForce GTX 1080"}},
      {"V100, cu126", cu126(machine::v100()), {}, "/cache", dirs("sm70"), {}},
      {"V100, cu128: only some releases carry sm_70, and no PTX fits", cu128(machine::v100()), {},
       "/cache", dirs("sm70"), {}},
      {"V100, cu130: CUDA 13 dropped Volta", cu130(machine::v100()), {}, "/cache", dirs("sm70"),
       {"no kernel image is available"}},
      {"T4, cu130", cu130(machine::t4()), {}, "/cache", dirs("sm75"), {}},
      {"A10, cu126", cu126(machine::a10()), {}, "/cache", dirs("sm86"), {}},
      {"8x A100 NVLink, cu128", cu128(machine::a100_nvlink_8()), {}, "/cache", dirs("sm80"), {}},
      {"A100 MIG, cu130", cu130(machine::a100_mig()), {}, "/cache", dirs("sm80"), {}},
      {"RTX 3090 + 4090, cu130", cu130(machine::rtx3090_4090()), {}, "/cache", dirs("sm86-sm89"),
       {}},
      {"CUDA_VISIBLE_DEVICES=1 keeps the 4090", cu130(machine::rtx3090_4090()),
       {{"CUDA_VISIBLE_DEVICES", "1"}}, "/cache", dirs("sm89"), {}},
      {"L4, cu118: sm_86 SASS runs on 8.9", torch(machine::l4(), "2.3.1+cu118", "11.8"), {},
       "/cache", dirs("sm89"), {}},
      {"H100, cu130", cu130(machine::h100()), {}, "/cache", dirs("sm90"), {}},
      {"H200, cu126", cu126(machine::h200()), {}, "/cache", dirs("sm90"), {}},
      {"B200, cu128", cu128(machine::b200()), {}, "/cache", dirs("sm100"), {}},
      {"B200, cu126: no Blackwell SASS, no PTX", cu126(machine::b200()), {}, "/cache",
       dirs("sm100"), {"carries neither SASS nor usable PTX for NVIDIA B200"}},
      {"B200, cu124: JIT from compute_90 PTX", cu124(machine::b200()), {}, "/cache",
       jit(dirs("sm100")), {}},
      {"RTX 5090, cu128", cu128(machine::rtx5090()), {}, "/cache", dirs("sm120"), {}},
      {"RTX 5090, cu126", cu126(machine::rtx5090()), {}, "/cache", dirs("sm120"),
       {"carries neither SASS nor usable PTX for NVIDIA GeForce RTX 5090"}},
      {"RTX 5090, cu124", cu124(machine::rtx5090()), {}, "/cache", jit(dirs("sm120")), {}},
      {"a GPU beyond the table, cu130: JIT from compute_120 PTX", cu130(one_gpu("next", {13, 0})),
       {}, "/cache", jit(dirs("sm130")), {}},
      {"B300, cu128: sm_100 SASS runs on 10.3", cu128(one_gpu("NVIDIA B300", {10, 3})), {},
       "/cache", dirs("sm103"), {}},
      {"GB10, cu130: sm_120 SASS runs on 12.1", cu130(one_gpu("NVIDIA GB10", {12, 1})), {},
       "/cache", dirs("sm121"), {}},
      {"Thor, cu130 (aarch64 wheel carries sm_110)", cu130(one_gpu("NVIDIA Thor", {11, 0})), {},
       "/cache", dirs("sm110"), {}},
      {"Thor, cu129", torch(one_gpu("NVIDIA Thor", {11, 0}), "2.9.0+cu129", "12.9"), {}, "/cache",
       dirs("sm110"), {"no kernel image"}},
      {"Jetson Orin, JetPack torch",
       torch(machine::jetson_orin(), "2.5.0a0+872d972e41.nv24.08", "12.6"), {}, "/cache",
       dirs("sm87"), {"torch 2.5.0a0+872d972e41.nv24.08 is not an official wheel"}},
      {"no GPU", cu130(machine::none()), {}, "/cache", {}, {}},
  };
  // clang-format on
}

std::vector<Row> edges() {
  // clang-format off
  return {
      {"no cache root: nothing", cu130(machine::h100()), {}, "", {}, {}},
      {"trailing slash on the root", cu130(machine::h100()), {}, "/cache/", dirs("sm90"), {}},
      {"root is /", cu130(machine::h100()), {}, "/", dirs("sm90", ""), {}},
      {"no torch: no MAXSIZE, said", machine::h100(), {}, "/cache", dirs("sm90"),
       {"CUDA_CACHE_MAXSIZE left at the driver default: no torch found"}},
      {"CPU torch", torch(machine::h100(), "2.11.0+cpu", ""), {}, "/cache", dirs("sm90"),
       {"torch 2.11.0+cpu is a CPU build"}},
      {"source build", torch(machine::h100(), "2.12.0a0+gitabc1234", "13.0"), {}, "/cache",
       dirs("sm90"), {"is not an official wheel"}},
      {"unknown CUDA variant", torch(machine::h100(), "2.13.0+cu132", "13.2"), {}, "/cache",
       dirs("sm90"), {"gpuenv has no arch table for cu132 wheels"}},
      {"PyPI wheel without a local label", torch(machine::b200(), "2.11.0", "13.0"), {}, "/cache",
       dirs("sm100"), {}},
      {"capability not sensed", without_cc(cu130(machine::h100())), {}, "/cache", {},
       {"caches left alone: the compute capability of NVIDIA H100 80GB HBM3 (cc unknown)"}},
      {"CUDA_VISIBLE_DEVICES hides every GPU", cu130(machine::h100()),
       {{"CUDA_VISIBLE_DEVICES", ""}}, "/cache", {}, {}},
  };
  // clang-format on
}

void run(const std::vector<Row>& rows) {
  for (const Row& r : rows) {
    SCOPED_TRACE(r.description);
    Options o = options_for(r.machine, r.env);
    o.cache_root = r.cache_root;
    Decision d = rule_caches(r.machine, o);
    EXPECT_EQ(settings_of(d), r.expected);
    expect_notes(d, r.notes);
  }
}

TEST(Caches, Machines) { run(machines()); }
TEST(Caches, Edges) { run(edges()); }

TEST(Caches, MaxsizeReasonNamesOnlyTheJitGpus) {
  Machine m = cu124(MachineBuilder().gpus(models::h100()).gpus(models::rtx5090()));
  Options o = options_for(m);
  o.cache_root = "/cache";
  Decision d = rule_caches(m, o);
  EXPECT_EQ(settings_of(d), jit(dirs("sm90-sm120")));
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
  Decision d = rule_caches(m, o);
  EXPECT_EQ(settings_of(d), Env{});
  expect_notes(d, {"caches left alone: /shared is writable by everyone without the sticky bit"});
}

}  // namespace
}  // namespace gpuenv
