// Independent float64 references for the op tests: plain loops over multi-indices that read
// elements one by one with Tensor::at, so they share no code path with the kernels under test.
// Also builders for the non-contiguous inputs (transposed, strided, expanded) the kernels must accept.
#pragma once
#include <functional>

#include "op_table/op_spec.h"
#include "test_util.h"

namespace ember::testing {

// The index arithmetic and loop references are the op table's (tests/op_table/op_spec.h), so that
// the table-driven suite and these special-purpose tests share one definition of each.
using optable::broadcast_index;
using optable::for_each_index;
using optable::ref_binary;
using optable::ref_broadcast;
using optable::ref_tensor;
using optable::ref_unary;

// Non-contiguous float64 inputs of a given shape, each with random values.
// The transpose of a contiguous tensor: swaps the last two dims (shape must be at least 2-d).
inline Tensor transposed_random(const Shape& shape, uint64_t seed, bool positive = false) {
  Shape s = shape;
  std::swap(s[s.size() - 1], s[s.size() - 2]);
  Tensor t = random(s, seed, positive).transpose(-1, -2);
  if (s[s.size() - 1] > 1 && s[s.size() - 2] > 1) EXPECT_FALSE(t.is_contiguous());
  return t;
}
// Every second element of a tensor twice as long along the last dim (offset 1, step 2).
inline Tensor strided_random(const Shape& shape, uint64_t seed, bool positive = false) {
  Shape s = shape;
  s.back() = 2 * s.back() + 1;
  Tensor t = random(s, seed, positive).slice(-1, 1, s.back(), 2);
  EXPECT_EQ(t.shape(), shape);
  EXPECT_FALSE(t.is_contiguous());
  return t;
}
// A stride-0 broadcast of a tensor whose first dim is 1.
inline Tensor expanded_random(const Shape& shape, uint64_t seed, bool positive = false) {
  Shape s = shape;
  s[0] = 1;
  Tensor t = random(s, seed, positive).expand(shape);
  EXPECT_EQ(t.strides()[0], 0);
  return t;
}

}  // namespace ember::testing
