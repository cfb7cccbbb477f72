// Independent float64 references for the op tests: plain loops over multi-indices that read
// elements one by one with Tensor::at, so they share no code path with the kernels under test.
// Also builders for the non-contiguous inputs (transposed, strided, expanded) the kernels must accept.
#pragma once
#include <functional>

#include "test_util.h"

namespace ember::testing {

// Calls f(index) for every multi-index of `shape` in row-major order.
inline void for_each_index(const Shape& shape, const std::function<void(const Shape&)>& f) {
  if (numel(shape) == 0) return;
  Shape idx(shape.size(), 0);
  while (true) {
    f(idx);
    int64_t d = int64_t(shape.size()) - 1;
    for (; d >= 0; --d) {
      if (++idx[size_t(d)] < shape[size_t(d)]) break;
      idx[size_t(d)] = 0;
    }
    if (d < 0) return;
  }
}

// The index into an operand of shape `in` that NumPy broadcasting reads for output index `out`.
inline Shape broadcast_index(const Shape& out, const Shape& in) {
  Shape idx(in.size());
  size_t lead = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) idx[i] = in[i] == 1 ? 0 : out[lead + i];
  return idx;
}

// NumPy's broadcast shape, computed here without calling ember::broadcast_shapes.
inline Shape ref_broadcast(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i + a.size() < n ? 1 : a[i + a.size() - n];
    int64_t db = i + b.size() < n ? 1 : b[i + b.size() - n];
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// A float64 tensor of `shape` with element idx = f(idx).
inline Tensor ref_tensor(const Shape& shape, const std::function<double(const Shape&)>& f) {
  Tensor out = zeros(shape, DType::Float64);
  for_each_index(shape, [&](const Shape& i) { out.set(i, f(i)); });
  return out;
}

inline Tensor ref_unary(const Tensor& x, const std::function<double(double)>& f) {
  return ref_tensor(x.shape(), [&](const Shape& i) { return f(x.at(i)); });
}

inline Tensor ref_binary(const Tensor& a, const Tensor& b, const std::function<double(double, double)>& f) {
  Shape s = ref_broadcast(a.shape(), b.shape());
  return ref_tensor(s, [&](const Shape& i) { return f(a.at(broadcast_index(i, a.shape())), b.at(broadcast_index(i, b.shape()))); });
}

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
