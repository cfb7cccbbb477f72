// CPU kernels of conv2d and its two gradients: im2col + the packed GEMM per image and group.
// Images are split between threads (each GEMM then runs on one thread); a single image lets the
// GEMM thread itself. All take and return contiguous float32 or float64 tensors.
#pragma once
#include "framework/core/tensor.h"
#include "ops/conv/conv_geometry.h"

namespace ember::cpu {

// y = conv(x, w) + b (b may be undefined).
Tensor conv2d_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& b);
// dx from the output cotangent dy: col2im(w^T dy).
Tensor conv2d_input_grad(const ConvGeometry& g, const Tensor& dy, const Tensor& w);
// dw = sum over images of dy im2col(x)^T.
Tensor conv2d_weight_grad(const ConvGeometry& g, const Tensor& x, const Tensor& dy);

}  // namespace ember::cpu
