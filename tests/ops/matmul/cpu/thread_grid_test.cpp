// How many threads a packed product runs on, and how they split C (ops/matmul/cpu/thread_grid.cpp).
#include "framework/core/parallel.h"
#include "ops/matmul/cpu/packed_internal.h"
#include "test_util.h"

namespace ember {
namespace {

namespace pg = cpu::packed_gemm;

::testing::AssertionResult grid_is(pg::Grid g, int tm, int tn) {
  if (g.tm == tm && g.tn == tn) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << g.tm << " x " << g.tn << ", expected " << tm << " x " << tn;
}

// The grid whose largest share is smallest; on a tie (within 5%) rows are split, or, where A is
// not packed (columns_free), columns, unless that leaves a share more than 5% larger.
TEST(PackedThreadGrid, SmallestLargestShareRowsOnATieColumnsWhereAIsNotPacked) {
  EXPECT_TRUE(grid_is(pg::thread_grid(1, 10, 10), 1, 1));
  EXPECT_TRUE(grid_is(pg::thread_grid(1, 10, 10, true), 1, 1));
  EXPECT_TRUE(grid_is(pg::thread_grid(2, 10, 10), 2, 1));         // 5 x 10 against 10 x 5: a tie
  EXPECT_TRUE(grid_is(pg::thread_grid(2, 10, 10, true), 1, 2));
  EXPECT_TRUE(grid_is(pg::thread_grid(2, 1, 100), 1, 2));         // one row panel: only columns split
  EXPECT_TRUE(grid_is(pg::thread_grid(2, 100, 1, true), 2, 1));   // one column: only rows
  EXPECT_TRUE(grid_is(pg::thread_grid(4, 1, 100), 1, 4));
  EXPECT_TRUE(grid_is(pg::thread_grid(4, 100, 100), 4, 1));       // 25 x 100 against 50 x 50: a tie
  EXPECT_TRUE(grid_is(pg::thread_grid(2, 10, 11, true), 2, 1));   // columns 60 tiles against 55: 9% more
  EXPECT_TRUE(grid_is(pg::thread_grid(2, 20, 21, true), 1, 2));   // 220 against 210: within 5%
}

// Threads from 128^3 multiply-adds on, where not already inside a parallel region.
TEST(PackedThreadGrid, ThreadsFrom128CubedMultiplyAdds) {
  auto args = [](int64_t m, int64_t n, int64_t k) {
    return GemmArgs{m, n, k, nullptr, k, 1, nullptr, n, 1, nullptr, n, DType::Float32};
  };
  EXPECT_EQ(pg::threads_for(args(127, 128, 128)), 1);
  EXPECT_EQ(pg::threads_for(args(1, 1, 1)), 1);
  EXPECT_EQ(pg::threads_for(args(128, 128, 128)), num_threads());
  EXPECT_EQ(pg::threads_for(args(1, 50257, 768)), num_threads());
}

}  // namespace
}  // namespace ember
