// Convolutions over NCHW (conv2d) and NCL (conv1d) inputs, as PyTorch's F.conv2d / F.conv1d:
// cross-correlation with stride, symmetric zero padding, dilation and groups. The CPU kernels
// unfold each image into columns (im2col) and multiply them by the weight with the packed GEMM;
// the input gradient folds columns back (col2im).
#pragma once
#include <array>

#include "framework/core/tensor.h"

namespace ember {

struct Conv2dOptions {
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> padding{0, 0};  // zeros added on both sides of H resp. W
  std::array<int64_t, 2> dilation{1, 1};
  int64_t groups = 1;
};

// x: (N, C, H, W); weight: (Cout, C / groups, kh, kw); bias: (Cout) or undefined.
// Returns (N, Cout, OH, OW) with OH = (H + 2 ph - dh (kh - 1) - 1) / sh + 1, likewise OW.
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(), const Conv2dOptions& opt = {});

// x: (N, C, L); weight: (Cout, C / groups, k); bias: (Cout) or undefined. A conv2d with H = 1.
Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(), int64_t stride = 1,
              int64_t padding = 0, int64_t dilation = 1, int64_t groups = 1);

// conv2d's gradients as ops of their own (each differentiable again, so grad of grad works):
// the input gradient of a conv with output cotangent g, and its weight gradient.
Tensor conv2d_input_grad(const Tensor& g, const Tensor& weight, const Shape& input_shape, const Conv2dOptions& opt);
Tensor conv2d_weight_grad(const Tensor& x, const Tensor& g, const Shape& weight_shape, const Conv2dOptions& opt);

}  // namespace ember
