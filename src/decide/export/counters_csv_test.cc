#include "decide/export/counters_csv.h"

#include <gtest/gtest.h>

namespace gpuenv {
namespace {

std::vector<DcgmCounter> parsed(std::string_view text) {
  std::vector<DcgmCounter> out;
  std::string err;
  EXPECT_TRUE(parse_dcgm_counters(text, &out, &err)) << err;
  return out;
}

std::string error(std::string_view text) {
  std::vector<DcgmCounter> out;
  std::string err;
  EXPECT_FALSE(parse_dcgm_counters(text, &out, &err));
  return err;
}

TEST(DcgmCounters, ReadsDcgmExportersOwnLayout) {
  auto c = parsed(
      "# Format\n# If line starts with a '#' it is considered a comment\n# DCGM FIELD, Prometheus metric type, help "
      "message\n\n# Clocks,,\nDCGM_FI_DEV_SM_CLOCK,  gauge, SM clock frequency (in MHz).\r\n"
      "DCGM_FI_DEV_XID_ERRORS, gauge, Value of the last XID error encountered.\n"
      "DCGM_FI_DRIVER_VERSION, label, Driver Version\n"
      "DCGM_FI_DEV_PCIE_REPLAY_COUNTER, counter, \"Total number of PCIe retries, all \"\"lanes\"\"\"");
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0].field, "DCGM_FI_DEV_SM_CLOCK");
  EXPECT_EQ(c[0].type, "gauge");
  EXPECT_EQ(c[0].help, "SM clock frequency (in MHz).");
  EXPECT_EQ(c[0].line, 6);
  EXPECT_EQ(c[2].type, "label");
  EXPECT_EQ(c[3].help, "Total number of PCIe retries, all \"lanes\"");
  EXPECT_EQ(c[3].line, 9);
}

TEST(DcgmCounters, AnEmptyFileOrOnlyCommentsSelectsNothing) {
  EXPECT_TRUE(parsed("").empty());
  EXPECT_TRUE(parsed("# nothing\n\n   \n").empty());
}

TEST(DcgmCounters, ABadLineIsNamedByNumberAndWhy) {
  EXPECT_EQ(error("# x\nDCGM_FI_DEV_GPU_TEMP, gauge\n"), "line 2: 2 fields, want 3: FIELD, TYPE, HELP");
  EXPECT_EQ(error("DCGM_FI_DEV_GPU_TEMP, gauge, a, b\n"), "line 1: 4 fields, want 3: FIELD, TYPE, HELP");
  EXPECT_EQ(error("DCGM_FI_DEV_GPU_TEMP, gaug, help\n"),
            "line 1: type \"gaug\" is not gauge, counter, histogram, summary or label");
  EXPECT_EQ(error("DCGM FI, gauge, help\n"), "line 1: the field name must be letters, digits and _ (DCGM_FI_DEV_GPU_TEMP)");
  EXPECT_EQ(error("A, gauge, \"open\n"), "line 1: a quoted field is not closed");
  EXPECT_EQ(error("A, gauge, \"x\"y\n"), "line 1: text after a quoted field's closing quote");
  EXPECT_EQ(error("A, gauge, x\"y\n"), "line 1: a quote inside an unquoted field");
  EXPECT_EQ(error(std::string_view("A, gauge, x\0y\n", 14)), "line 1: a control character");
}

}  // namespace
}  // namespace gpuenv
