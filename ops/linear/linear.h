// linear(x, W, b) = x W^T + b, the affine map of nn::Linear, as one primitive. W is (out, in) as in
// PyTorch; x is (..., in); b is (out) or undefined. One primitive rather than matmul(x, W.t()) + b
// because its VJP can produce W's gradient directly in W's layout (g^T x, contiguous (out, in)):
// through matmul and transpose, it arrives as a transposed view that the backward pass then has
// to copy into a contiguous gradient (12% of a Fashion-MNIST training step).
#pragma once
#include "framework/core/tensor.h"

namespace ember {

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());

}  // namespace ember
