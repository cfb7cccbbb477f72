// Indexing by int64 tensors: gather and scatter_add along one dim (each the other's transpose, so
// gradients of gradients work), index_select built on gather, argmin/argmax (ops/reduce), and the
// non-differentiable one_hot and nonzero. Every index is checked: one outside [0, size) is an
// ember::Error naming the op, the index and the size.
#pragma once
#include <cstdint>

#include "framework/core/tensor.h"

namespace ember {

// out[i][j][k] = x[i][index[i][j][k]][k] for dim 1 (likewise for any dim). index has x's number of
// dims and is no larger than x in the others; the result has index's shape.
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
// x with src[i][j][k] added at [i][index[i][j][k]][k] (dim 1); src has index's shape, and repeated
// indices accumulate. Differentiable in x and src.
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
// The slices of x along dim at the positions in the 1-d int64 `index` (repeats allowed).
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
// int64 (..., num_classes) with a 1 at each index; num_classes = -1 takes the largest index + 1.
Tensor one_hot(const Tensor& indices, int64_t num_classes = -1);
// The positions of x's nonzero elements, row-major: int64 of shape (count, x.dim()).
Tensor nonzero(const Tensor& x);

}  // namespace ember
