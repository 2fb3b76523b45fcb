#include "sys/text.h"

#include <gtest/gtest.h>

#include <regex>

namespace gpuenv {
namespace {

using Views = std::vector<std::string_view>;

TEST(Text, TrimTakesBlanksOffBothEndsOnly) {
  EXPECT_EQ(trim(""), "");
  EXPECT_EQ(trim(" \t\r\n"), "");
  EXPECT_EQ(trim("a"), "a");
  EXPECT_EQ(trim("  a b \r\n"), "a b");
  EXPECT_EQ(trim("\ta\tb\t"), "a\tb");
}

TEST(Text, TrimTakesTheCharactersItIsGiven) {
  EXPECT_EQ(trim(" 0\n", " \t"), "0\n");  // a newline is kept when not named
  EXPECT_EQ(trim(", a:1 ,", " \t,"), "a:1");
  EXPECT_EQ(trim(",,,", " \t,"), "");
  EXPECT_EQ(trim("xax", ""), "xax");
}

TEST(Text, SplitKeepsEmptyPieces) {
  EXPECT_EQ(split("", ','), (Views{""}));
  EXPECT_EQ(split("a", ','), (Views{"a"}));
  EXPECT_EQ(split("a,,b", ','), (Views{"a", "", "b"}));
  EXPECT_EQ(split(",", ','), (Views{"", ""}));
  EXPECT_EQ(split(":a:", ':'), (Views{"", "a", ""}));
  std::string nul("a\0b", 3);
  EXPECT_EQ(split(nul, '\0'), (Views{"a", "b"}));
}

TEST(Text, JoinPutsTheSeparatorBetweenItemsOnly) {
  EXPECT_EQ(join({}, ", "), "");
  EXPECT_EQ(join({"a"}, ", "), "a");
  EXPECT_EQ(join({"docker", "veth", "lo"}, ","), "docker,veth,lo");
}

TEST(Text, SplitCommasTrimsAndDropsEmptyItems) {
  EXPECT_EQ(split_commas(""), (std::vector<std::string>{}));
  EXPECT_EQ(split_commas(" , ,"), (std::vector<std::string>{}));
  EXPECT_EQ(split_commas("a, b,,c"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(split_commas("\ta b\t"), (std::vector<std::string>{"a b"}));
}

TEST(Text, AsciiLowerLeavesOtherBytes) {
  EXPECT_EQ(ascii_lower("H200 SXM"), "h200 sxm");
  EXPECT_EQ(ascii_lower("\xC3\x89"), "\xC3\x89");
}

TEST(Text, UtcTimeIsRfc3339ToTheSecond) {
  EXPECT_EQ(utc_time(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(utc_time(1741089600), "2025-03-04T12:00:00Z");
  EXPECT_TRUE(std::regex_match(utc_now(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"))) << utc_now();
}

TEST(Text, UtcNowMsIsRfc3339UtcWithMilliseconds) {
  EXPECT_TRUE(std::regex_match(utc_now_ms(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")))
      << utc_now_ms();
  char buf[32];
  utc_now_ms(buf);
  EXPECT_TRUE(std::regex_match(buf, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)"))) << buf;
}

}  // namespace
}  // namespace gpuenv
