// The one periodic thread: rounds at the interval, stop() wakes the wait at
// once, and nothing runs after stop() returns.
#include "sys/periodic.h"

#include <gtest/gtest.h>

#include <atomic>

#include "wait_until.h"

namespace gpuenv {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::kEventBound;
using testing::wait_until;

TEST(Periodic, StopWakesTheWaitPromptly) {
  Periodic p;
  std::atomic<int> rounds{0};
  std::atomic<bool> waiting{false};
  p.start(std::chrono::hours(1), [&] { ++rounds; }, [&] { waiting = true; });
  ASSERT_TRUE(wait_until([&] { return waiting.load(); }));
  auto t0 = Clock::now();
  p.stop();
  EXPECT_LT(Clock::now() - t0, kEventBound);  // not the hour
  EXPECT_EQ(rounds, 0);
}

// Three rounds come, and never more often than the interval: a busy machine
// can only make them later.
TEST(Periodic, RoundsHappenAtTheInterval) {
  Periodic p;
  std::atomic<int> rounds{0};
  auto t0 = Clock::now();
  p.start(50ms, [&] { ++rounds; });
  EXPECT_TRUE(wait_until([&] { return rounds >= 3; }));
  p.stop();
  double elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  EXPECT_GE(rounds, 3);
  EXPECT_LE(rounds, int(elapsed_ms / 50));  // never more often than the interval
}

TEST(Periodic, FirstRunsOnTheThreadBeforeAnyRound) {
  Periodic p;
  std::atomic<int> rounds{0};
  std::atomic<int> rounds_at_first{-1};
  std::thread::id first_thread;
  p.start(1ms, [&] { ++rounds; }, [&] { rounds_at_first = rounds.load(), first_thread = std::this_thread::get_id(); });
  EXPECT_TRUE(wait_until([&] { return rounds >= 2; }));
  p.stop();
  EXPECT_EQ(rounds_at_first, 0);
  EXPECT_NE(first_thread, std::this_thread::get_id());
}

// stop() returns only once the round in progress has finished, and no round
// starts after it: a round that starts once stop() has returned is counted.
TEST(Periodic, StopWaitsForTheRoundInProgressAndNoMore) {
  Periodic p;
  std::atomic<bool> in_round{false}, stopping{false}, stopped{false};
  std::atomic<int> started{0}, finished{0}, after_stop{0};
  p.start(1ms, [&] {
    if (stopped) ++after_stop;
    ++started, in_round = true;
    wait_until([&] { return stopping.load(); });  // a round still going when stop() comes
    in_round = false, ++finished;
  });
  ASSERT_TRUE(wait_until([&] { return in_round.load(); }));
  stopping = true;
  p.stop();
  stopped = true;
  EXPECT_EQ(started.load(), finished.load());
  p.stop();  // a second stop() finds no thread, and a round left over would count
  EXPECT_EQ(after_stop, 0);
}

// A stop() that comes while `first` runs: no round at all. `first` holds
// until the test is about to stop, and the interval is an hour, so only a
// round run without waiting for the interval (or a lost stop) could count.
TEST(Periodic, StopDuringFirstMeansNoRound) {
  Periodic p;
  std::atomic<bool> in_first{false}, stopping{false};
  std::atomic<int> rounds{0};
  p.start(1h, [&] { ++rounds; }, [&] {
    in_first = true;
    wait_until([&] { return stopping.load(); });
  });
  ASSERT_TRUE(wait_until([&] { return in_first.load(); }));
  stopping = true;
  auto t0 = Clock::now();
  p.stop();
  EXPECT_LT(Clock::now() - t0, kEventBound);  // not the hour
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
