// Layer normalisation over the last dimension.
#pragma once
#include "framework/core/tensor.h"

namespace ember {

// y = (x - mean) / sqrt(var + eps) * weight + bias over x's last dim (biased variance, as PyTorch).
// weight and bias have shape (D) and may be undefined (then 1 and 0).
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps = 1e-5);

}  // namespace ember
