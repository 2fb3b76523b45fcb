#include "act/render/printable.h"

#include <gtest/gtest.h>

#include <cstdio>

namespace gpuenv {
namespace {

std::string hex(unsigned c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", c);
  return buf;
}

TEST(Printable, EscapesEveryC0ControlAndDel) {
  for (unsigned c = 0; c < 0x20; ++c) EXPECT_EQ(printable(std::string(1, char(c))), hex(c)) << c;
  EXPECT_EQ(printable("\x7f"), "\\x7f");
  EXPECT_EQ(printable("a\nb\tc"), "a\\x0ab\\x09c");
}

TEST(Printable, LinesKeepOnlyNewlineAndTab) {
  EXPECT_EQ(printable_lines("a\nb\tc"), "a\nb\tc");
  EXPECT_EQ(printable_lines("\r\x1b]0;PWNED\x07\x1b[2J"), "\\x0d\\x1b]0;PWNED\\x07\\x1b[2J");
}

TEST(Printable, EscapesC1ControlsInUtf8) {
  for (unsigned c = 0x80; c < 0xa0; ++c) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\u%04x", c);
    std::string utf8 = {char(0xc2), char(c)};
    EXPECT_EQ(printable(utf8), buf) << c;
    EXPECT_EQ(printable_lines(utf8), buf) << c;
  }
}

TEST(Printable, EscapesBytesThatAreNotUtf8) {
  EXPECT_EQ(printable("\x9b" "2J"), "\\x9b2J");                 // a raw C1 CSI
  EXPECT_EQ(printable("\xc2"), "\\xc2");                        // truncated
  EXPECT_EQ(printable("\xc0\x9b"), "\\xc0\\x9b");               // overlong CSI
  EXPECT_EQ(printable("\xe0\x82\x9b"), "\\xe0\\x82\\x9b");      // overlong, 3 bytes
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");      // a surrogate
  EXPECT_EQ(printable("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(printable("\xff"), "\\xff");
}

TEST(Printable, KeepsValidUtf8) {
  for (const char* s : {"plain ASCII 123", "\xc2\xa0nbsp", "caf\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x9a\x80",
                        "\xed\x9f\xbf", "\xf4\x8f\xbf\xbf"})
    EXPECT_EQ(printable(s), s) << s;
}

}  // namespace
}  // namespace gpuenv
