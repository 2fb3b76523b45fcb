#include "sys/bytes.h"

#include <gtest/gtest.h>

namespace gpuenv {
namespace {

TEST(Bytes, HumanBytesPicksTheLargestUnit) {
  EXPECT_EQ(human_bytes(0), "0 B");
  EXPECT_EQ(human_bytes(512), "512 B");
  EXPECT_EQ(human_bytes(1023), "1023 B");
  EXPECT_EQ(human_bytes(1024), "1.0 KiB");
  EXPECT_EQ(human_bytes(64ull << 20), "64.0 MiB");
  EXPECT_EQ(human_bytes(3ull << 29), "1.5 GiB");
  EXPECT_EQ(human_bytes(2ull << 40), "2.0 TiB");
  EXPECT_EQ(human_bytes(5ull << 60), "5120.0 PiB");  // PiB is the last unit
}

TEST(Bytes, GibTextIsAlwaysGib) {
  EXPECT_EQ(gib_text(1ull << 29), "0.5 GiB");
  EXPECT_EQ(gib_text(1ull << 31), "2.0 GiB");
  EXPECT_EQ(gib_text(0), "0.0 GiB");
}

TEST(Bytes, BytesTextIsWholeWhenItCanBe) {
  EXPECT_EQ(bytes_text(64ull << 30), "64 GiB");
  EXPECT_EQ(bytes_text(3ull << 29), "1.5 GiB");
  EXPECT_EQ(bytes_text(1ull << 30), "1 GiB");
  EXPECT_EQ(bytes_text(8ull << 20), "8 MiB");
  EXPECT_EQ(bytes_text((8ull << 20) + 1000), "8 MiB");
  EXPECT_EQ(bytes_text(1000), "0 MiB");
}

}  // namespace
}  // namespace gpuenv
