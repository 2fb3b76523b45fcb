#include "model/hardware/xid.h"

#include <gtest/gtest.h>

#include <string>

namespace gpuenv {
namespace {

TEST(Xid, DescriptionsAreDcgmExportersErrMsg) {
  EXPECT_EQ(std::string(xid_description(0)), "No Error");
  EXPECT_EQ(std::string(xid_description(13)), "Graphics Engine Exception");
  EXPECT_EQ(std::string(xid_description(48)), "Double Bit ECC Error");
  EXPECT_EQ(std::string(xid_description(74)), "NVLINK Error");
  EXPECT_EQ(std::string(xid_description(79)), "GPU has fallen off the bus");
  EXPECT_EQ(std::string(xid_description(94)), "Contained ECC error");
  EXPECT_EQ(std::string(xid_description(172)), "Uncorrectable SRAM Error");
}

TEST(Xid, ACodePastTheTableIsUnknown) {
  EXPECT_EQ(std::string(xid_description(173)), "Unknown Error");
  EXPECT_EQ(std::string(xid_description(~0ull)), "Unknown Error");
}

}  // namespace
}  // namespace gpuenv
