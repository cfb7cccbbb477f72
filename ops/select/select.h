// Selection and scan along one dimension: top-k, sort and cumulative sums.
//
// Order (topk, sort): values compare as floats, with NaN ranked above every number (so NaNs come
// first in a descending result and last in an ascending one) and -0.0 tied with +0.0. Equal
// values keep their index order: ties go to the lower index, so the results are deterministic
// and the same on the CPU and the GPU (see ops/select/order_key.h).
// Inputs must be float32 or float64 and at least 1-d (0-d tensors are refused: a scalar has no
// last dimension to select along). On CUDA tensors these run Thrust (radix sort, scan by key).
//
// Differentiability: `values` of topk and sort are differentiable in x (the gradient is g
// scattered back to the chosen positions, the tangent is gathered from them; both through the
// embedding gather/scatter pair, so gradients of gradients work); `indices` are int64 data.
// cumsum and cumsum_reverse are linear, each the other's transpose.
#pragma once
#include <cstdint>

#include "framework/core/tensor.h"

namespace ember {

struct TopK {
  Tensor values;   // x.dtype, shape (..., k)
  Tensor indices;  // int64, shape (..., k): positions along the last dim of x
};

// The k largest (largest = true) or smallest entries of each row along the last dim, sorted
// (descending for largest, ascending otherwise). k must lie in [0, n]; k = 0 gives empty results.
TopK topk(const Tensor& x, int64_t k, bool largest = true);

// Each row along the last dim sorted (stably: equal values keep their order), with the
// permutation that sorts it: sort(x, descending) is topk(x, n, /*largest=*/descending).
TopK sort(const Tensor& x, bool descending = false);

// out[..., i, ...] = sum over j <= i of x[..., j, ...] along `dim` (negative counts from the end).
// Any strides; the result is contiguous. float32 sums accumulate in double on both devices.
Tensor cumsum(const Tensor& x, int64_t dim);
// The reverse cumulative sum: out[i] = sum over j >= i of x[j] along dim (cumsum's VJP).
Tensor cumsum_reverse(const Tensor& x, int64_t dim);

}  // namespace ember
