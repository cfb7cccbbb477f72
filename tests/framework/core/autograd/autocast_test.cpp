// The autocast scope's state: off by default, nests, restores on exit and on an exception, is per
// thread, and refuses a dtype that is not a half. What it does to ops is in
// tests/ops/autocast/autocast_policy_test.cpp.
#include "framework/core/autograd/autocast.h"

#include <thread>

#include "test_util.h"

using namespace ember;

TEST(Autocast, OffByDefault) {
  EXPECT_FALSE(autocast::is_enabled());
  EXPECT_FALSE(autocast::detail::active());
}

TEST(Autocast, GuardNestsAndRestores) {
  {
    autocast::Guard outer(DType::BFloat16);
    EXPECT_TRUE(autocast::is_enabled());
    EXPECT_EQ(autocast::state().dtype, DType::BFloat16);
    {
      autocast::Guard inner(DType::Float16);
      EXPECT_TRUE(autocast::is_enabled());
      EXPECT_EQ(autocast::state().dtype, DType::Float16);
      {
        autocast::Guard off(DType::BFloat16, /*enabled=*/false);
        EXPECT_FALSE(autocast::is_enabled());
        EXPECT_FALSE(autocast::detail::active());
      }
      EXPECT_TRUE(autocast::is_enabled());
      EXPECT_EQ(autocast::state().dtype, DType::Float16);
    }
    EXPECT_EQ(autocast::state().dtype, DType::BFloat16);
    EXPECT_TRUE(autocast::detail::active());
  }
  EXPECT_FALSE(autocast::is_enabled());
}

TEST(Autocast, RestoresWhenAnExceptionLeavesTheScope) {
  try {
    autocast::Guard g(DType::BFloat16);
    ASSERT_TRUE(autocast::is_enabled());
    throw Error("leaving");
  } catch (const Error&) {
  }
  EXPECT_FALSE(autocast::is_enabled());
}

TEST(Autocast, SuspendTurnsItOffWithoutChangingTheState) {
  autocast::Guard g(DType::Float16);
  {
    autocast::detail::Suspend s;
    EXPECT_FALSE(autocast::detail::active());
    EXPECT_TRUE(autocast::is_enabled());  // the user's setting is unchanged
  }
  EXPECT_TRUE(autocast::detail::active());
}

TEST(Autocast, RefusesADtypeThatIsNotAHalf) {
  for (DType d : {DType::Float32, DType::Float64, DType::Int64, DType::Bool}) {
    EXPECT_EMBER_ERROR(autocast::Guard g(d), "bfloat16 or float16");
    EXPECT_FALSE(autocast::is_enabled());
  }
  EXPECT_EMBER_ERROR(autocast::set_state({true, DType::Float32}), "got float32");
  EXPECT_FALSE(autocast::is_enabled());
}

TEST(Autocast, IsPerThread) {
  autocast::Guard g(DType::BFloat16);
  bool other = true;
  std::thread t([&] { other = autocast::is_enabled(); });
  t.join();
  EXPECT_FALSE(other);
  EXPECT_TRUE(autocast::is_enabled());
}
