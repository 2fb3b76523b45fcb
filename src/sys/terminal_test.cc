#include "sys/terminal.h"

#include <gtest/gtest.h>

#include <cstdio>

namespace gpuenv {
namespace {

TEST(Terminal, Utf8Locale) {
  EXPECT_TRUE(utf8_locale(nullptr, nullptr, "en_US.UTF-8"));
  EXPECT_TRUE(utf8_locale("C.utf8", nullptr, nullptr));
  EXPECT_FALSE(utf8_locale("C", "en_US.UTF-8", "en_US.UTF-8"));  // LC_ALL wins
  EXPECT_TRUE(utf8_locale("", "en_US.UTF-8", nullptr));           // an empty one is unset
  EXPECT_FALSE(utf8_locale(nullptr, nullptr, nullptr));
}

// Into a file: no terminal, so no colour and no wrapping unless $COLUMNS says.
TEST(Terminal, AFileIsNoTerminal) {
  FILE* f = std::tmpfile();
  ASSERT_TRUE(f);
  EXPECT_FALSE(is_terminal(f));
  EXPECT_FALSE(color_wanted(f));
  unsetenv("COLUMNS");
  EXPECT_EQ(terminal_columns(f), 0u);
  setenv("COLUMNS", "132", 1);
  EXPECT_EQ(terminal_columns(f), 132u);
  unsetenv("COLUMNS");
  std::fclose(f);
}

}  // namespace
}  // namespace gpuenv
