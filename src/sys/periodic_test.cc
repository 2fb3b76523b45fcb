// The one periodic thread: rounds at the interval, stop() wakes the wait at
// once, and nothing runs after stop() returns.
#include "sys/periodic.h"

#include <gtest/gtest.h>

#include <atomic>

namespace gpuenv {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST(Periodic, StopWakesTheWaitPromptly) {
  Periodic p;
  std::atomic<int> rounds{0};
  p.start(std::chrono::hours(1), [&] { ++rounds; });
  std::this_thread::sleep_for(20ms);
  auto t0 = Clock::now();
  p.stop();
  EXPECT_LT(Clock::now() - t0, 2s);  // not the hour
  EXPECT_EQ(rounds, 0);
}

TEST(Periodic, RoundsHappenAtTheInterval) {
  Periodic p;
  std::atomic<int> rounds{0};
  auto t0 = Clock::now();
  p.start(50ms, [&] { ++rounds; });
  std::this_thread::sleep_for(400ms);
  p.stop();
  double elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  EXPECT_GE(rounds, 1);
  EXPECT_LE(rounds, int(elapsed_ms / 50));  // never more often than the interval
  EXPECT_GE(rounds, 3) << "a busy machine may delay rounds, but not most of them";
}

TEST(Periodic, FirstRunsOnTheThreadBeforeAnyRound) {
  Periodic p;
  std::atomic<int> rounds{0};
  std::atomic<int> rounds_at_first{-1};
  std::thread::id first_thread;
  p.start(1ms, [&] { ++rounds; }, [&] { rounds_at_first = rounds.load(), first_thread = std::this_thread::get_id(); });
  while (rounds < 2) std::this_thread::sleep_for(1ms);
  p.stop();
  EXPECT_EQ(rounds_at_first, 0);
  EXPECT_NE(first_thread, std::this_thread::get_id());
}

TEST(Periodic, StopWaitsForTheRoundInProgressAndNoMore) {
  Periodic p;
  std::atomic<bool> in_round{false};
  std::atomic<int> started{0}, finished{0};
  p.start(1ms, [&] {
    ++started, in_round = true;
    std::this_thread::sleep_for(100ms);
    in_round = false, ++finished;
  });
  while (!in_round) std::this_thread::sleep_for(1ms);
  p.stop();
  EXPECT_EQ(started.load(), finished.load());
  int after = started;
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(started, after);
}

TEST(Periodic, StopDuringFirstMeansNoRound) {
  Periodic p;
  std::atomic<bool> in_first{false};
  std::atomic<int> rounds{0};
  p.start(1ms, [&] { ++rounds; }, [&] {
    in_first = true;
    std::this_thread::sleep_for(50ms);
  });
  while (!in_first) std::this_thread::sleep_for(1ms);
  p.stop();
  EXPECT_EQ(rounds, 0);
}

TEST(Periodic, StopWithoutStartAndTwiceIsHarmless) {
  Periodic p;
  p.stop();
  p.start(1h, [] {});
  p.stop();
  p.stop();
}

}  // namespace
}  // namespace gpuenv
