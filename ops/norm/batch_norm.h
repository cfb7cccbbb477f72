// Batch normalisation over dim 1 of an (N, C, ...) input, as PyTorch's F.batch_norm.
#pragma once
#include "framework/core/tensor.h"

namespace ember {

// training: normalises each channel by its mean and biased variance over the batch (and spatial
// dims), and when running_mean / running_var are defined updates them in place (not recorded):
//   running = (1 - momentum) * running + momentum * batch statistic,
// with the unbiased variance for running_var, as PyTorch. Inference: normalises by the running
// statistics (then required). weight and bias, (C) each, may be undefined (1 and 0).
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum = 0.1, double eps = 1e-5);

}  // namespace ember
