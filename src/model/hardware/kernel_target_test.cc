#include "model/hardware/kernel_target.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "model/fatbin.h"

namespace gpuenv {
namespace {

TEST(KernelTarget, NamesParseBackToTheirTargets) {
  for (const char* n : {"sm_50", "sm_80", "sm_90a", "sm_100f", "sm_121", "compute_90", "compute_100a", "compute_120f"}) {
    SCOPED_TRACE(n);
    std::optional<KernelTarget> t = parse_kernel_target(n);
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(kernel_target_name(*t), n);
  }
  EXPECT_EQ(parse_kernel_target("sm_90a"), (KernelTarget{false, {9, 0}, TargetVariant::kArchSpecific}));
  EXPECT_EQ(parse_kernel_target("compute_121"), (KernelTarget{true, {12, 1}, TargetVariant::kPlain}));
}

TEST(KernelTarget, WhatIsNoTargetIsRefused) {
  for (const char* n : {"", "sm_", "sm_9", "sm_1000", "sm_90x", "sm_9a0", "lto_90", "compute_", "SM_90", "sm90"})
    EXPECT_EQ(parse_kernel_target(n), std::nullopt) << n;
}

TEST(KernelTarget, ListedCubinsFirstThenByCapabilityThenVariant) {
  std::vector<std::string> names = {"compute_90", "sm_100f", "lto_90", "sm_90a", "sm_90", "compute_80", "sm_80"};
  std::sort(names.begin(), names.end(), target_listed_before);
  EXPECT_EQ(names, (std::vector<std::string>{"sm_80", "sm_90", "sm_90a", "sm_100f", "compute_80", "compute_90",
                                             "lto_90"}));
}

TEST(KernelTarget, FatbinEntriesAreNamedThroughIt) {
  FatbinEntry e;
  e.kind = kFatbinKindCubin, e.arch = 90, e.flags = kFatbinFlagArchSpecific;
  EXPECT_EQ(fatbin_target_name(e), "sm_90a");
  EXPECT_EQ(target_variant(e), TargetVariant::kArchSpecific);
  e.kind = kFatbinKindPtx, e.arch = 100, e.flags = kFatbinFlagFamily;
  EXPECT_EQ(fatbin_target_name(e), "compute_100f");
  e.kind = kFatbinKindLtoIr, e.arch = 90, e.flags = 0;
  EXPECT_EQ(fatbin_target_name(e), "lto_90");
  e.kind = 7;
  EXPECT_EQ(fatbin_target_name(e), "kind7_90");
}

}  // namespace
}  // namespace gpuenv
