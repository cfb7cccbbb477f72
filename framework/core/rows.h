// Rows: a tensor seen as independent rows along one dim, for kernels that work row by row
// (softmax, layer_norm, cross_entropy, embedding). Any strides are fine (transposed and sliced
// views need no copy); row r starts at offset(r) and steps by `stride`. The other dims are merged
// where their strides allow, so a contiguous tensor's offset(r) is one multiply.
#pragma once
#include <cstdint>

#include "framework/core/tensor.h"

namespace ember {

struct Rows {
  int64_t count = 0;   // number of rows
  int64_t len = 0;     // elements per row
  int64_t stride = 1;  // step along a row, in elements
  int64_t base = 0;    // the tensor's offset into its storage
  Shape outer_shape, outer_strides;  // the other dims, merged where possible

  int64_t offset(int64_t r) const {
    int64_t off = base;
    for (size_t d = outer_shape.size(); d-- > 0;) {
      int64_t n = outer_shape[d];
      off += (r % n) * outer_strides[d];
      r /= n;
    }
    return off;
  }
};

// t's rows along `dim` (already wrapped into [0, t.dim())); a 0-d tensor is one row of length 1.
inline Rows rows_along(const Tensor& t, int64_t dim) {
  Rows r;
  r.base = t.offset();
  if (t.dim() == 0) {
    r.count = r.len = 1;
    return r;
  }
  const Shape& s = t.shape();
  const Shape& st = t.strides();
  r.len = s[size_t(dim)];
  r.stride = st[size_t(dim)];
  r.count = 1;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d == dim) continue;
    int64_t n = s[size_t(d)];
    r.count *= n;
    if (n == 1) continue;  // a size-1 dim never moves the offset
    // Merge with the previous outer dim when they step like one contiguous dim.
    if (!r.outer_shape.empty() && r.outer_strides.back() == st[size_t(d)] * n) {
      r.outer_shape.back() *= n;
      r.outer_strides.back() = st[size_t(d)];
    } else {
      r.outer_shape.push_back(n);
      r.outer_strides.push_back(st[size_t(d)]);
    }
  }
  return r;
}

}  // namespace ember
