#include "sense/parallel.h"

#include <gtest/gtest.h>

#include <new>

namespace gpuenv {
namespace {

// An exception on a helper thread (bad_alloc under a memory limit) reaches
// the caller, for main to report, instead of std::terminate.
TEST(Parallel, AnExceptionOnAThreadIsRethrownToTheCaller) {
  for (std::size_t threads : {1, 4}) {
    EXPECT_THROW(parallel_for(64, threads,
                              [](std::size_t i) {
                                if (i == 17) throw std::bad_alloc();
                              }),
                 std::bad_alloc);
  }
  Background b([] { throw std::bad_alloc(); });
  EXPECT_THROW(b.wait(), std::bad_alloc);
  b.wait();  // once only
  { Background dropped([] { throw std::bad_alloc(); }); }  // joined, not terminated
}

}  // namespace
}  // namespace gpuenv
