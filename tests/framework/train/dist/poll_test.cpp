// poll_until: true as soon as the condition holds, false once the deadline has passed.
#include "framework/train/dist/poll.h"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

TEST(DistPoll, ReturnsWhenDone) {
  int calls = 0;
  // Past the spinning phase (200 polls), so that the yielding and napping phases run too.
  EXPECT_TRUE(ember::dist::poll_until([&] { return ++calls == 1000; }, 30.0, 1e-5));
  EXPECT_EQ(calls, 1000);
}

TEST(DistPoll, GivesUpAfterTheTimeout) {
  const auto t0 = Clock::now();
  int calls = 0;
  EXPECT_FALSE(ember::dist::poll_until([&] { ++calls; return false; }, 0.1));
  const double waited = since(t0);
  EXPECT_GE(waited, 0.1);
  EXPECT_LT(waited, 5.0);
  EXPECT_GT(calls, 200);
}

TEST(DistPoll, ExceptionsPassThrough) {
  EXPECT_THROW(ember::dist::poll_until([]() -> bool { throw std::runtime_error("peer failed"); }, 1.0),
               std::runtime_error);
}

}  // namespace
