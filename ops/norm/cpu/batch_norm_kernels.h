// CPU kernels of batch_norm in training mode over a contiguous (N, C, S) view of the input: the
// per-channel statistics with the normalised output, and the fused backward.
#pragma once
#include "framework/core/tensor.h"

namespace ember::cpu {

// y, and per channel the mean, rstd = 1 / sqrt(var + eps) and the biased var, each (C).
Tensor batch_norm_train(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps, Tensor* mean,
                        Tensor* rstd, Tensor* var);

struct BatchNormGrads {
  Tensor dx, dweight, dbias;
};
// dx = rstd * w * (g - mean(g) - xhat mean(g xhat)), dweight = sum(g xhat), dbias = sum(g), the
// means and sums per channel; only the parts asked for.
BatchNormGrads batch_norm_backward(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& weight,
                                   const Tensor& g, bool dx, bool dweight, bool dbias);

}  // namespace ember::cpu
