// Pooling over NCHW inputs, as PyTorch's F.max_pool2d, F.avg_pool2d and F.adaptive_avg_pool2d
// (floor mode; average pooling counts the zero padding, PyTorch's count_include_pad=True).
#pragma once
#include <array>

#include "framework/core/tensor.h"

namespace ember {

using Pair = std::array<int64_t, 2>;

// The maximum of each window; the gradient flows to the maximum (the first one in row-major
// window order on a tie, as PyTorch). stride {0, 0} means stride = kernel. Padding (at most half
// the dilated kernel) is -infinity.
Tensor max_pool2d(const Tensor& x, Pair kernel, Pair stride = {0, 0}, Pair padding = {0, 0}, Pair dilation = {1, 1});

// The mean of each kernel-sized window (a depthwise convolution with constant weights).
Tensor avg_pool2d(const Tensor& x, Pair kernel, Pair stride = {0, 0}, Pair padding = {0, 0});

// Means over the windows [floor(i H / OH), ceil((i + 1) H / OH)) x (likewise along W) that cover
// the input for any output size: two products with averaging matrices (a separable average).
Tensor adaptive_avg_pool2d(const Tensor& x, Pair output_size);

}  // namespace ember
