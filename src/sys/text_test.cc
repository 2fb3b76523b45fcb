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

TEST(Text, Utf8PrefixNeverCutsACharacter) {
  const std::string euro = "ab\xe2\x82\xac" "c", smile = "\xf0\x9f\x98\x80", e_acute = "caf\xc3\xa9";
  struct Row {
    std::string s;
    std::size_t max;
    std::string want;
  } rows[] = {
      {euro, 2, "ab"},        {euro, 3, "ab"},  {euro, 4, "ab"},         {euro, 5, "ab\xe2\x82\xac"},
      {euro, 99, euro},       {smile, 3, ""},   {smile, 4, smile},       {smile + "x", 1, ""},
      {e_acute, 4, "caf"},    {e_acute, 5, e_acute}, {"", 0, ""},       {"abc", 0, ""},
      {"a\x80\x80\x80\x80\x80\x80", 6, "a\x80\x80"},  // stray continuation bytes: back at most 3
  };
  for (const auto& r : rows) EXPECT_EQ(utf8_prefix(r.s, r.max), r.want) << r.s << " at " << r.max;
  // Every cut of a text of two-, three- and four-byte characters ends on a character's end.
  const std::string mixed = "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xc3\xa9";
  for (std::size_t max = 0; max <= mixed.size(); ++max) {
    std::string_view p = utf8_prefix(mixed, max);
    EXPECT_TRUE(p.size() == 0 || p.size() == 2 || p.size() == 5 || p.size() == 9 || p.size() == 11) << max;
  }
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
