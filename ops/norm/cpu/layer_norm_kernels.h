// CPU layer_norm kernel: one pass per row gathers the shifted sums that give mean and variance,
// a second writes (x - mean) * rstd * weight + bias. Any strides; float32 and float64.
#pragma once
#include "framework/core/tensor.h"

namespace ember::cpu {

// Normalises over x's last dim; weight and bias (shape (D)) may be undefined, meaning 1 and 0.
// When mean / rstd are not null they receive the row statistics (x's shape with last dim 1),
// rstd = 1 / sqrt(var + eps) with the biased variance.
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps, Tensor* mean, Tensor* rstd);

// The backward rule as fused kernels, from the forward's saved row statistics (mean and rstd as
// returned above, contiguous): with xhat = (x - mean) * rstd and gw = g * weight (weight may be
// undefined, meaning 1), dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)), one read of x and g
// per row; and dweight = sum over rows of g * xhat, in one pass with per-thread partial sums.
Tensor layer_norm_backward_input(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& weight,
                                 const Tensor& g);
Tensor layer_norm_backward_weight(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& g);

}  // namespace ember::cpu
