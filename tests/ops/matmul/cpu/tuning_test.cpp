// The rules of ops/matmul/cpu/tuning.h, on the shapes they were measured on (TUNING.md).
#include "ops/matmul/cpu/tuning.h"

#include <gtest/gtest.h>

namespace {

namespace pg = ember::cpu::packed_gemm;

// Stripes shallower than kStripeFullDepth take at most two thirds as many rows as their depth,
// or a k that one block holds; from kStripeFullDepth on, every row count.
TEST(PackedTuning, StripesTooShallowForTheirRows) {
  EXPECT_TRUE(pg::stripes_too_shallow(96, 768, 128));    // 128 rows at 4096 columns
  EXPECT_FALSE(pg::stripes_too_shallow(96, 96, 128));    // ... whose k is one block
  EXPECT_FALSE(pg::stripes_too_shallow(96, 768, 64));    // 64 rows: exactly two thirds of 96
  EXPECT_TRUE(pg::stripes_too_shallow(48, 768, 64));     // 64 rows at 8192 columns
  EXPECT_FALSE(pg::stripes_too_shallow(48, 768, 32));
  EXPECT_FALSE(pg::stripes_too_shallow(192, 768, 256));  // full depth: every row count
  EXPECT_FALSE(pg::stripes_too_shallow(384, 3072, 256));
}

// Threads split rows where C has at most 2 (row-major B) or 1 (transposed B) columns per row,
// and at least two row panels per thread.
TEST(PackedTuning, FewRowsSplitRowsWhereCIsNarrow) {
  EXPECT_TRUE(pg::splits_rows(256, 256, pg::kRowMajorColumnsPerRow, 43, 2));
  EXPECT_TRUE(pg::splits_rows(128, 256, pg::kRowMajorColumnsPerRow, 22, 2));
  EXPECT_FALSE(pg::splits_rows(128, 256, pg::kTransposedColumnsPerRow, 22, 2));
  EXPECT_FALSE(pg::splits_rows(64, 768, pg::kRowMajorColumnsPerRow, 11, 2));
  EXPECT_FALSE(pg::splits_rows(20, 20, pg::kRowMajorColumnsPerRow, 3, 2));  // too few panels
  EXPECT_TRUE(pg::splits_rows(24, 20, pg::kRowMajorColumnsPerRow, 4, 2));
}

}  // namespace
