#include "sense/error_table.h"

#include <gtest/gtest.h>

namespace gpuenv {
namespace {

constexpr LibraryError kTable[] = {
    {3, "X_ERROR_THREE", "x_three", "three went wrong", "fix three"},
    {7, "X_ERROR_SEVEN", "x_seven", "seven went wrong", "fix seven"},
};
constexpr UnlistedError kUnlisted{"x", "x_error", "X error", "unrecognised X error", "look around"};

TEST(ErrorTable, FindsTheRowOfACodeOrNothing) {
  EXPECT_EQ(find_library_error(kTable, 7), &kTable[1]);
  EXPECT_EQ(find_library_error(kTable, 4), nullptr);
  EXPECT_EQ(find_library_error({}, 3), nullptr);
}

TEST(ErrorTable, ProblemOfAListedCodeUsesItsRow) {
  Problem p = library_error_problem(kTable, kUnlisted, "xGet(GPU 1)", 3, "library says");
  EXPECT_EQ(p.source, "x");
  EXPECT_EQ(p.code, "x_three");
  EXPECT_EQ(p.message, "xGet(GPU 1) failed: three went wrong (X_ERROR_THREE = 3)");
  EXPECT_EQ(p.fix, "fix three");
}

TEST(ErrorTable, ProblemOfAnUnlistedCodePrefersTheLibrarysText) {
  Problem p = library_error_problem(kTable, kUnlisted, "xGet", 99, "library says");
  EXPECT_EQ(p.code, "x_error");
  EXPECT_EQ(p.message, "xGet failed: library says (X error = 99)");
  EXPECT_EQ(p.fix, "look around");
  p = library_error_problem(kTable, kUnlisted, "xGet", 99, nullptr);
  EXPECT_EQ(p.message, "xGet failed: unrecognised X error (X error = 99)");
}

}  // namespace
}  // namespace gpuenv
