// Float64 references for row-wise ops (softmax family, layer_norm, cross_entropy): a plain loop
// over each row of a contiguous copy, independent of the kernels under test.
#pragma once
#include <functional>
#include <vector>

#include "test_util.h"

namespace ember::testing {

// Applies `fn` to every row of x along `dim` (x float, any layout); `fn` maps a row of length L to
// `out_len` values. Returns float64 of x's shape with dim's size set to out_len.
inline Tensor map_rows(const Tensor& x, int64_t dim, int64_t out_len,
                       const std::function<std::vector<double>(const std::vector<double>&)>& fn) {
  int64_t nd = x.dim();
  dim = dim < 0 ? dim + nd : dim;
  Tensor moved = x.detach().transpose(dim, nd - 1).contiguous();
  std::vector<double> v = moved.to_vector<double>();
  int64_t len = x.size(dim), rows = len ? int64_t(v.size()) / len : 0;
  std::vector<double> out;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> row(v.begin() + r * len, v.begin() + (r + 1) * len);
    std::vector<double> y = fn(row);
    out.insert(out.end(), y.begin(), y.end());
  }
  Shape ms = moved.shape();
  ms.back() = out_len;
  return from_vector(out, ms).transpose(dim, nd - 1).contiguous();
}

// A float64 tensor of `shape` viewed through a transpose of its last two dims (non-contiguous).
inline Tensor transposed_random(const Shape& shape, uint64_t seed) {
  Shape s = shape;
  std::swap(s[s.size() - 1], s[s.size() - 2]);
  return random(s, seed).transpose(-1, -2);
}

}  // namespace ember::testing
