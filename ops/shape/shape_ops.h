// Shape primitives: views that share storage (reshape, transpose, permute, slice, expand) and the
// copies that join or split tensors. All are differentiable; views cost no copy.
#pragma once
#include <vector>

#include "framework/core/tensor.h"

namespace ember {

Tensor reshape(const Tensor& x, const Shape& shape);  // view when possible, else copy; one -1 allowed
Tensor view(const Tensor& x, const Shape& shape);     // never copies; error when strides forbid it
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1);
Tensor permute(const Tensor& x, const Shape& dims);
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
Tensor expand(const Tensor& x, const Shape& shape);
Tensor unsqueeze(const Tensor& x, int64_t dim);
Tensor squeeze(const Tensor& x, int64_t dim);
Tensor copy(const Tensor& x);  // a fresh contiguous copy (the gradient passes straight through)

Tensor concat(const std::vector<Tensor>& xs, int64_t dim);
Tensor stack(const std::vector<Tensor>& xs, int64_t dim);
// Splits into pieces of the given sizes along dim (they must add up to the dim's size).
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim);
// Equal pieces of `size` along dim (the last may be shorter).
std::vector<Tensor> split(const Tensor& x, int64_t size, int64_t dim);

// The VJP of slice: a zero tensor of `shape` with g written into the sliced region.
Tensor slice_backward(const Tensor& g, const Shape& shape, int64_t dim, int64_t start, int64_t step);

// dst = src elementwise (same shape and dtype, any strides); not recorded.
void copy_strided(const Tensor& dst, const Tensor& src);
// Raw strided copy into a fresh contiguous tensor, on x's device; not recorded.
Tensor contiguous_kernel(const Tensor& x);

}  // namespace ember
