// Row-by-row iteration over strided operands, the building block of the CPU kernels that accept
// views (transposed, sliced, broadcast with stride 0) without copying them first.
#pragma once
#include <array>
#include <cstdint>
#include <utility>

#include "framework/core/shape.h"

namespace ember {

// The number of innermost rows of `shape` (1 for a scalar, 0 when it is empty).
inline int64_t row_count(const Shape& shape) {
  if (numel(shape) == 0) return 0;
  return shape.empty() ? 1 : numel(shape) / shape.back();
}

// Visits rows [r0, r1) of `shape` in row-major order, one innermost row at a time. For operand k,
// strides[k] gives its strides (same rank as shape) and base[k] its starting offset. Calls
// f(offsets, len), where offsets[k] is operand k's offset at the row start and it steps by
// strides[k].back() along the row. A range lets threads take disjoint rows of one loop.
template <size_t N, class F>
void for_each_row_in(const Shape& shape, const std::array<const Shape*, N>& strides, std::array<int64_t, N> base,
                     int64_t r0, int64_t r1, F&& f) {
  int64_t nd = int64_t(shape.size());
  if (numel(shape) == 0 || r0 >= r1) return;
  if (nd == 0) {
    f(base, int64_t(1));
    return;
  }
  int64_t len = shape[nd - 1];
  // The index of row r0 in the outer dimensions, and every operand's offset there.
  Shape idx(nd, 0);
  std::array<int64_t, N> off = base;
  for (int64_t d = nd - 2, r = r0; d >= 0; --d) {
    idx[d] = r % shape[d];
    r /= shape[d];
    for (size_t k = 0; k < N; ++k) off[k] += idx[d] * (*strides[k])[d];
  }
  for (int64_t r = r0; r < r1; ++r) {
    f(off, len);
    for (int64_t d = nd - 2; d >= 0; --d) {
      if (++idx[d] < shape[d]) {
        for (size_t k = 0; k < N; ++k) off[k] += (*strides[k])[d];
        break;
      }
      for (size_t k = 0; k < N; ++k) off[k] -= (*strides[k])[d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
}

// All rows of `shape`, as above.
template <size_t N, class F>
void for_each_row(const Shape& shape, const std::array<const Shape*, N>& strides, std::array<int64_t, N> base, F&& f) {
  for_each_row_in(shape, strides, base, 0, row_count(shape), std::forward<F>(f));
}

// Strides of a tensor of shape `from` (strides `st`) broadcast to `to`: 0 along broadcast dims.
inline Shape broadcast_strides(const Shape& from, const Shape& st, const Shape& to) {
  Shape out(to.size(), 0);
  size_t lead = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i) out[lead + i] = from[i] == 1 ? 0 : st[i];
  return out;
}

}  // namespace ember
