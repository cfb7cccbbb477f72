// How many threads a packed product runs on, and how they split C (ops/matmul/cpu/thread_grid.cpp).
#include "framework/core/parallel.h"
#include "ops/matmul/cpu/packed_internal.h"
#include "ops/matmul/matmul.h"
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

// Columns taken in turns: groups of kColumnsInTurn columns, but at least two groups per thread.
TEST(PackedThreadGrid, ColumnsInTurnGiveEveryThreadTwoGroups) {
  const int nr = 16, most = int(pg::kColumnsInTurn / nr);
  EXPECT_EQ(pg::columns_in_turn_group(8, nr, 2), 2);      // C of 128 columns: four groups, not one
  EXPECT_EQ(pg::columns_in_turn_group(24, nr, 2), 6);     // 384 columns: four groups, not three
  EXPECT_EQ(pg::columns_in_turn_group(256, nr, 2), most); // wide C: kColumnsInTurn at a time
  EXPECT_EQ(pg::columns_in_turn_group(1, nr, 2), 1);
  EXPECT_EQ(pg::columns_in_turn_group(8, nr, 1), 4);
  EXPECT_EQ(pg::columns_in_turn_group(8, 64, 2), 2);      // wider slivers than kColumnsInTurn: one
}

// A product that splits its columns in turns gives the same bits on 2 threads as on 1, and the
// float64 product: a training step's narrow product (768 x 128 output, A read in place).
TEST(PackedThreadGrid, NarrowProductSplitInTurnsKeepsItsBits) {
  const int saved = num_threads();
  Tensor a = testing::random({768, 384}, 3).to(DType::Float32), b = testing::random({384, 128}, 4).to(DType::Float32);
  set_num_threads(1);
  Tensor one = matmul(a, b);
  set_num_threads(2);
  Tensor two = matmul(a, b);
  set_num_threads(saved);
  EXPECT_EQ(one.to_vector<float>(), two.to_vector<float>());
  EXPECT_TRUE(testing::all_close(one.to(DType::Float64), matmul(a.to(DType::Float64), b.to(DType::Float64)), 1e-4, 1e-4));
}

}  // namespace
}  // namespace ember
