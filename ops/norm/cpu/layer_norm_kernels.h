// CPU layer_norm kernel: one pass per row gathers the shifted sums that give mean and variance,
// a second writes (x - mean) * rstd * weight + bias. Any strides; float32 and float64.
#pragma once
#include "framework/tensor.h"

namespace ember::cpu {

// Normalises over x's last dim; weight and bias (shape (D)) may be undefined, meaning 1 and 0.
// When mean / rstd are not null they receive the row statistics (x's shape with last dim 1),
// rstd = 1 / sqrt(var + eps) with the biased variance.
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps, Tensor* mean, Tensor* rstd);

}  // namespace ember::cpu
