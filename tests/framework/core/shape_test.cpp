// Element counts, strides and byte sizes refuse shapes whose products do not fit in 64 bits,
// at tensor creation, instead of wrapping to a small count and a buffer too short for the data.
#include <cstdint>
#include <limits>

#include "test_util.h"

using namespace ember;

namespace {
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
}  // namespace

TEST(Shape, NumelAcceptsTheLargestCountAndRefusesTheNext) {
  EXPECT_EQ(numel({kMax}), kMax);
  EXPECT_EQ(numel({int64_t(1) << 31, int64_t(1) << 31}), int64_t(1) << 62);
  EXPECT_EQ(numel({(int64_t(1) << 62) - 1, 2}), kMax - 1);
  EXPECT_EMBER_ERROR(numel({int64_t(1) << 62, 2}), "more elements than fit in 64 bits");
  EXPECT_EMBER_ERROR(numel({int64_t(1) << 62, 8}), "[4611686018427387904, 8]");
  EXPECT_EMBER_ERROR(numel({274177, 67280421310721}), "64 bits");  // 2^64 + 1: wraps to 1 unchecked
  EXPECT_EQ(numel({0, kMax}), 0);
}

TEST(Shape, CheckedMulAndBytesBoundaries) {
  EXPECT_EQ(checked_mul(kMax, 1, "t"), kMax);
  EXPECT_EQ(checked_mul(3037000499, 3037000499, "t"), int64_t(3037000499) * 3037000499);
  EXPECT_EMBER_ERROR(checked_mul(3037000500, 3037000500, "t"), "t: 3037000500 x 3037000500 overflows");
  EXPECT_EMBER_ERROR(checked_mul(-1, 2, "t"), "non-negative");
  EXPECT_EQ(checked_bytes(kMax / 4, 4, "t"), kMax / 4 * 4);  // largest float32 count whose bytes fit
  EXPECT_EMBER_ERROR(checked_bytes(kMax / 4 + 1, 4, "t"), "bytes overflow 64 bits");
  EXPECT_EMBER_ERROR(checked_bytes(kMax / 8 + 1, 8, "t"), "of 8 bytes");
  EXPECT_EMBER_ERROR(checked_bytes(-5, 4, "t"), "negative element count -5");
}

TEST(Shape, StridesRefuseOverflowEvenWhenAZeroSizeHidesIt) {
  EXPECT_EQ(contiguous_strides({2, 3, 4}), (Shape{12, 4, 1}));
  EXPECT_EQ(contiguous_strides({kMax}), (Shape{1}));
  EXPECT_EQ(contiguous_strides({int64_t(1) << 40, 0, int64_t(1) << 40}), (Shape{0, int64_t(1) << 40, 1}));
  EXPECT_EMBER_ERROR(contiguous_strides({0, int64_t(1) << 32, int64_t(1) << 32}), "strides overflow");
  EXPECT_EMBER_ERROR(contiguous_strides({2, -3}), "negative size");
}

TEST(Shape, TensorCreationRefusesOverflowingShapesBeforeAllocating) {
  const int64_t allocations = memory_stats().allocations;
  EXPECT_EMBER_ERROR(zeros({int64_t(1) << 62, 8}), "more elements than fit in 64 bits");
  EXPECT_EMBER_ERROR(empty({int64_t(1) << 61}, DType::Float32), "bytes overflow 64 bits");  // 2^63 bytes
  EXPECT_EMBER_ERROR(empty({int64_t(1) << 60}, DType::Float64), "bytes overflow 64 bits");
  EXPECT_EMBER_ERROR(empty({0, int64_t(1) << 32, int64_t(1) << 32}), "strides overflow");
  EXPECT_EMBER_ERROR(zeros({3, -1}), "negative dimension");
  EXPECT_EQ(memory_stats().allocations, allocations);  // refused before the allocator was asked
  // Shapes at ordinary sizes, including empty ones, still work.
  EXPECT_EQ(zeros({0, int64_t(1) << 40}).numel(), 0);
  EXPECT_EQ(zeros({2, 3}).numel(), 6);
}
