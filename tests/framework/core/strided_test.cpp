// framework/core/strided.h: row-by-row iteration over strided operands, whole and by row ranges, and
// the strides of a broadcast.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "framework/core/strided.h"

namespace ember {
namespace {

// The offsets and lengths that a visit reports, in order.
struct Visit {
  std::vector<std::array<int64_t, 2>> offsets;
  std::vector<int64_t> lengths;
};

template <class Run>
Visit record(Run run) {
  Visit v;
  run([&](const std::array<int64_t, 2>& off, int64_t len) {
    v.offsets.push_back(off);
    v.lengths.push_back(len);
  });
  return v;
}

TEST(Strided, ForEachRowVisitsEveryRowInRowMajorOrder) {
  // A (2, 3, 4) view with strides (1, 8, 2) beside a contiguous output starting at 5.
  const Shape shape{2, 3, 4}, st{1, 8, 2}, out{12, 4, 1};
  Visit v = record([&](auto f) { for_each_row<2>(shape, {&st, &out}, {3, 5}, f); });
  ASSERT_EQ(v.offsets.size(), 6u);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      const auto& off = v.offsets[size_t(i * 3 + j)];
      EXPECT_EQ(off[0], 3 + i * 1 + j * 8) << i << "," << j;
      EXPECT_EQ(off[1], 5 + i * 12 + j * 4) << i << "," << j;
      EXPECT_EQ(v.lengths[size_t(i * 3 + j)], 4);
    }
}

TEST(Strided, RowRangesTogetherVisitWhatTheWholeLoopVisits) {
  // Random shapes and strides, cut into random consecutive ranges: the pieces, in order, report
  // exactly the rows of one whole visit (the ranges start mid-dimension, where the offsets of the
  // first row are computed rather than stepped to).
  std::mt19937 gen(11);
  for (int trial = 0; trial < 50; ++trial) {
    const int nd = 1 + int(gen() % 4);
    Shape shape(static_cast<size_t>(nd), 0), sa(static_cast<size_t>(nd), 0), sb(static_cast<size_t>(nd), 0);
    for (int d = 0; d < nd; ++d) {
      shape[size_t(d)] = 1 + int64_t(gen() % 4);
      sa[size_t(d)] = int64_t(gen() % 7);  // 0: a broadcast dimension
      sb[size_t(d)] = int64_t(gen() % 5) - 2;  // negative strides too
    }
    const int64_t rows = row_count(shape);
    Visit whole = record([&](auto f) { for_each_row<2>(shape, {&sa, &sb}, {100, 200}, f); });
    ASSERT_EQ(int64_t(whole.offsets.size()), rows);
    Visit pieces;
    for (int64_t r0 = 0; r0 < rows;) {
      const int64_t r1 = std::min(rows, r0 + 1 + int64_t(gen() % 3));
      Visit p = record([&](auto f) { for_each_row_in<2>(shape, {&sa, &sb}, {100, 200}, r0, r1, f); });
      EXPECT_EQ(int64_t(p.offsets.size()), r1 - r0);
      pieces.offsets.insert(pieces.offsets.end(), p.offsets.begin(), p.offsets.end());
      pieces.lengths.insert(pieces.lengths.end(), p.lengths.begin(), p.lengths.end());
      r0 = r1;
    }
    EXPECT_EQ(pieces.offsets, whole.offsets) << "trial " << trial;
    EXPECT_EQ(pieces.lengths, whole.lengths) << "trial " << trial;
  }
}

TEST(Strided, ScalarsEmptyShapesAndEmptyRanges) {
  const Shape scalar{}, none{};
  Visit s = record([&](auto f) { for_each_row<2>(scalar, {&none, &none}, {7, 9}, f); });
  ASSERT_EQ(s.offsets.size(), 1u);
  EXPECT_EQ(s.offsets[0], (std::array<int64_t, 2>{7, 9}));
  EXPECT_EQ(s.lengths[0], 1);
  EXPECT_EQ(row_count(scalar), 1);

  const Shape empty{3, 0, 2}, st{0, 2, 1};
  EXPECT_EQ(row_count(empty), 0);
  EXPECT_TRUE(record([&](auto f) { for_each_row<2>(empty, {&st, &st}, {0, 0}, f); }).offsets.empty());

  const Shape shape{2, 3}, st2{3, 1};
  EXPECT_TRUE(record([&](auto f) { for_each_row_in<2>(shape, {&st2, &st2}, {0, 0}, 1, 1, f); }).offsets.empty());
}

TEST(Strided, BroadcastStridesAreZeroAlongBroadcastDimensions) {
  // (3, 1) with strides (1, 1) broadcast to (2, 3, 4): a new leading dimension and the size-1 one.
  EXPECT_EQ(broadcast_strides({3, 1}, {1, 1}, {2, 3, 4}), (Shape{0, 1, 0}));
  EXPECT_EQ(broadcast_strides({2, 3}, {3, 1}, {2, 3}), (Shape{3, 1}));
}

}  // namespace
}  // namespace ember
