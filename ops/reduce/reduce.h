// Reductions over dimensions. `dims` may be negative; an empty `dims` reduces every dimension.
#pragma once
#include "framework/core/tensor.h"

namespace ember {

Tensor sum(const Tensor& x, const Shape& dims = {}, bool keepdim = false);
Tensor mean(const Tensor& x, const Shape& dims = {}, bool keepdim = false);
// Largest value along `dim`; the gradient is shared equally between tied maxima.
Tensor max(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor max(const Tensor& x);                                  // over every element
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);  // int64, not differentiable
// Smallest value along `dim` (or of every element); ties share the gradient as in max.
Tensor min(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor min(const Tensor& x);
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim = false);  // the first minimum's index, int64
// Product over dims; its gradient is right where elements are zero too (first order).
Tensor prod(const Tensor& x, const Shape& dims = {}, bool keepdim = false);
// Variance over dims, dividing by (count - correction): correction 1 is the unbiased estimate
// (PyTorch's default), 0 the population variance.
Tensor var(const Tensor& x, const Shape& dims = {}, double correction = 1.0, bool keepdim = false);
Tensor std(const Tensor& x, const Shape& dims = {}, double correction = 1.0, bool keepdim = false);
// The p-norm over dims: p = 1, 2, any p >= 1, or INFINITY (the largest magnitude).
Tensor norm(const Tensor& x, double p = 2.0, const Shape& dims = {}, bool keepdim = false);
// Sums x down to `shape`, undoing NumPy broadcasting (the VJP of broadcasting).
Tensor sum_to(const Tensor& x, const Shape& shape);

}  // namespace ember
