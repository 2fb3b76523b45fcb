#include "sense/capture.h"

#include <gtest/gtest.h>

#include <chrono>

#include "wait_until.h"

namespace gpuenv {
namespace {

TEST(Capture, OutputOfAProgramThatExitsZero) {
  std::string out, err;
  ASSERT_TRUE(capture_output({"/bin/sh", "-c", "echo one; echo two >&2; echo three"}, {}, &out, &err)) << err;
  EXPECT_EQ(out, "one\nthree\n");
}

TEST(Capture, FailuresAreNamed) {
  struct Row {
    std::vector<std::string> argv;
    CaptureLimits limits;
    std::string err;
  } rows[] = {
      {{"/bin/sh", "-c", "exit 3"}, {}, "/bin/sh exited with status 3"},
      {{"/bin/sh", "-c", "kill -9 $$"}, {}, "/bin/sh was killed by signal 9"},
      {{"/bin/sh", "-c", "sleep 60"}, {200, 1 << 20}, "/bin/sh: no answer within 200 ms"},
      {{"/bin/sh", "-c", "exec >&-; sleep 60"}, {200, 1 << 20}, "/bin/sh: no answer within 200 ms"},
      {{"/bin/sh", "-c", "yes"}, {5000, 4096}, "/bin/sh: more than 4096 bytes of output"},
      {{"/no/such/program"}, {}, "posix_spawn(/no/such/program): No such file or directory"},
  };
  for (const Row& r : rows) {
    auto start = std::chrono::steady_clock::now();
    std::string out, err;
    EXPECT_FALSE(capture_output(r.argv, r.limits, &out, &err)) << r.argv.back();
    EXPECT_EQ(err, r.err) << r.argv.back();
    // Not the minute a silent child sleeps: it was killed at the limit.
    EXPECT_LT(std::chrono::steady_clock::now() - start, testing::kEventBound) << r.argv.back();
  }
}

}  // namespace
}  // namespace gpuenv
