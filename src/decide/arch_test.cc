#include "decide/arch.h"

#include <gtest/gtest.h>

#include "builders.h"

namespace gpuenv {
namespace {

struct ArchRow {
  ComputeCapability cc;
  std::string family;
  std::string formats;  // tensor-core formats, space-separated
  std::vector<std::string> variants;
  std::string first_cuda, last_cuda;  // "" when unknown / still supported
  bool tegra;
  std::string product;  // one product the row must name
};

const std::string kAmp = "fp16 bf16 tf32", kAda = "fp16 bf16 tf32 fp8";
const std::string kBw = "fp16 bf16 tf32 fp8 fp4";

// Every compute capability 5.0..12.1 that exists. docs/architectures.md.
// clang-format off
const std::vector<ArchRow> kRows = {
    {{5, 0},  "Maxwell",      "",     {},                     "",     "12.9", false, "GTX 750 Ti"},
    {{5, 2},  "Maxwell",      "",     {},                     "",     "12.9", false, "M40"},
    {{5, 3},  "Maxwell",      "",     {},                     "",     "12.9", true,  "Jetson Nano"},
    {{6, 0},  "Pascal",       "",     {},                     "8.0",  "12.9", false, "P100"},
    {{6, 1},  "Pascal",       "",     {},                     "8.0",  "12.9", false, "1080"},
    {{6, 2},  "Pascal",       "",     {},                     "8.0",  "12.9", true,  "Jetson TX2"},
    {{7, 0},  "Volta",        "fp16", {},                     "9.0",  "12.9", false, "V100"},
    {{7, 2},  "Volta",        "fp16", {},                     "9.1",  "12.9", true,  "Xavier"},
    {{7, 5},  "Turing",       "fp16", {},                     "10.0", "",     false, "T4"},
    {{8, 0},  "Ampere",       kAmp,   {},                     "11.0", "",     false, "A100"},
    {{8, 6},  "Ampere",       kAmp,   {},                     "11.1", "",     false, "A10"},
    {{8, 7},  "Ampere",       kAmp,   {},                     "11.4", "",     true,  "Orin"},
    {{8, 8},  "Ampere",       kAmp,   {},                     "13.0", "",     false, "no product"},
    {{8, 9},  "Ada Lovelace", kAda,   {},                     "11.8", "",     false, "L4"},
    {{9, 0},  "Hopper",       kAda,   {"sm_90a"},             "11.8", "",     false, "H200"},
    {{10, 0}, "Blackwell",    kBw,    {"sm_100a", "sm_100f"}, "12.8", "",     false, "B200"},
    {{10, 1}, "Blackwell",    kBw,    {"sm_101a", "sm_101f"}, "12.8", "12.9", true,  "Thor"},
    {{10, 3}, "Blackwell",    kBw,    {"sm_103a", "sm_103f"}, "12.9", "",     false, "B300"},
    {{11, 0}, "Blackwell",    kBw,    {"sm_110a", "sm_110f"}, "13.0", "",     true,  "Thor"},
    {{12, 0}, "Blackwell",    kBw,    {"sm_120a", "sm_120f"}, "12.8", "",     false, "RTX 50"},
    {{12, 1}, "Blackwell",    kBw,    {"sm_121a", "sm_121f"}, "12.9", "",     false, "DGX Spark"},
};
// clang-format on

std::string formats(const TensorFormats& t) {
  std::string out;
  auto add = [&](bool on, const char* name) {
    if (on) out += (out.empty() ? "" : " ") + std::string(name);
  };
  add(t.fp16, "fp16");
  add(t.bf16, "bf16");
  add(t.tf32, "tf32");
  add(t.fp8, "fp8");
  add(t.fp4, "fp4");
  return out;
}

std::string release(const std::optional<CudaRelease>& r) {
  return r ? std::to_string(r->major) + "." + std::to_string(r->minor) : "";
}

TEST(Arch, TableHasExactlyTheseCapabilitiesAscending) {
  ASSERT_EQ(arch_table().size(), kRows.size());
  for (size_t i = 0; i < kRows.size(); ++i) EXPECT_EQ(arch_table()[i].cc, kRows[i].cc) << i;
}

TEST(Arch, EveryRow) {
  for (const ArchRow& r : kRows) {
    SCOPED_TRACE(cc_string(r.cc));
    const ArchInfo* a = arch_info(r.cc);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->family, r.family);
    EXPECT_EQ(family_name(r.cc), r.family);
    EXPECT_EQ(formats(a->tensor), r.formats);
    EXPECT_EQ(a->variants, r.variants);
    EXPECT_EQ(release(a->first_cuda), r.first_cuda);
    EXPECT_EQ(release(a->last_cuda), r.last_cuda);
    EXPECT_EQ(a->tegra, r.tegra);
    EXPECT_NE(a->products.find(r.product), std::string::npos) << a->products;
  }
}

TEST(Arch, NoTensorCoresBeforeVolta) {
  for (const auto& a : arch_table()) {
    if (a.cc < ComputeCapability{7, 0}) {
      EXPECT_EQ(a.tensor, TensorFormats{}) << cc_string(a.cc);
    }
  }
}

TEST(Arch, UnknownCapabilities) {
  for (ComputeCapability cc : {ComputeCapability{3, 7}, {8, 5}, {9, 1}, {13, 0}, {0, 0}}) {
    EXPECT_EQ(arch_info(cc), nullptr) << cc_string(cc);
    EXPECT_EQ(family_name(cc), "unknown (cc " + cc_string(cc) + ")");
  }
  EXPECT_EQ(cc_string({12, 1}), "12.1");
}

TEST(Arch, DescribeGroupsByModel) {
  Machine a100 = testing::machine::a100_nvlink_8();
  EXPECT_EQ(describe_devices(visible_devices(a100, nullptr).devices),
            "8x NVIDIA A100-SXM4-80GB (Ampere, 8.0)");
  Machine mixed = testing::machine::rtx3090_4090();
  EXPECT_EQ(describe_devices(visible_devices(mixed, nullptr).devices),
            "NVIDIA GeForce RTX 3090 (Ampere, 8.6), NVIDIA GeForce RTX 4090 (Ada Lovelace, 8.9)");
  Machine mig = testing::machine::a100_mig();
  EXPECT_EQ(describe_devices(visible_devices(mig, nullptr).devices),
            "3x NVIDIA A100-SXM4-80GB MIG 2g.20gb (Ampere, 8.0)");
}

TEST(Arch, DistinctCapabilities) {
  Machine mixed = testing::MachineBuilder()
                      .gpus(testing::models::rtx4090())
                      .gpus(testing::models::rtx3090(), 2)
                      .build();
  auto ccs = distinct_ccs(visible_devices(mixed, nullptr).devices);
  ASSERT_TRUE(ccs);
  EXPECT_EQ(*ccs, (std::vector<ComputeCapability>{{8, 6}, {8, 9}}));

  mixed.gpus[1].compute_capability.reset();
  auto devices = visible_devices(mixed, nullptr).devices;
  EXPECT_FALSE(distinct_ccs(devices));
  EXPECT_EQ(describe_unknown_cc(devices), "NVIDIA GeForce RTX 3090 (cc unknown)");
}

}  // namespace
}  // namespace gpuenv
