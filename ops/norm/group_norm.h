// Group normalisation (Wu and He) and RMS normalisation (Zhang and Sennrich).
#pragma once
#include "framework/core/tensor.h"

namespace ember {

// x: (N, C, ...); each of `groups` groups of C / groups channels is normalised over its channels
// and the remaining dims (biased variance), then scaled and shifted per channel by weight and
// bias, (C) each, which may be undefined. As PyTorch's F.group_norm.
Tensor group_norm(const Tensor& x, int64_t groups, const Tensor& weight = Tensor(), const Tensor& bias = Tensor(),
                  double eps = 1e-5);

// x / sqrt(mean(x^2) + eps) * weight over x's last dim; weight, (D), may be undefined. As
// PyTorch's F.rms_norm with normalized_shape = (D) and an explicit eps.
Tensor rms_norm(const Tensor& x, const Tensor& weight = Tensor(), double eps = 1e-6);

}  // namespace ember
