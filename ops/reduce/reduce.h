// Reductions over dimensions. `dims` may be negative; an empty `dims` reduces every dimension.
#pragma once
#include "framework/tensor.h"

namespace ember {

Tensor sum(const Tensor& x, const Shape& dims = {}, bool keepdim = false);
Tensor mean(const Tensor& x, const Shape& dims = {}, bool keepdim = false);
// Largest value along `dim`; the gradient is shared equally between tied maxima.
Tensor max(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor max(const Tensor& x);                                  // over every element
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);  // int64, not differentiable
// Sums x down to `shape`, undoing NumPy broadcasting (the VJP of broadcasting).
Tensor sum_to(const Tensor& x, const Shape& shape);

}  // namespace ember
