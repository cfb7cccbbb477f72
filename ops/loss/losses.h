// The common losses, written with Ember's differentiable ops (so every derivative order works),
// with PyTorch's names, defaults and reductions. input and target share shape, dtype and device
// unless said otherwise.
#pragma once
#include <cstdint>

#include "framework/core/tensor.h"

namespace ember {

enum class Reduction { None, Mean, Sum };

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
// 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target); beta > 0.
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
                      double beta = 1.0);
// log_probs: (N, C) or (C); target: int64 (N) or 0-d, in [0, C) or equal to ignore_index. The mean
// is over the targets not ignored.
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, Reduction reduction = Reduction::Mean,
                int64_t ignore_index = -100);
// probs in [0, 1]; each log is clamped at -100 as PyTorch does, so p = 0 or 1 stays finite.
Tensor binary_cross_entropy(const Tensor& probs, const Tensor& target, Reduction reduction = Reduction::Mean);
// binary_cross_entropy(sigmoid(logits), target) computed as softplus(x) - x t: no overflow for
// large |x| and no log of a rounded 0.
Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target,
                                        Reduction reduction = Reduction::Mean);

struct CrossEntropyOptions {
  Reduction reduction = Reduction::Mean;
  int64_t ignore_index = -100;  // targets equal to it add nothing and are not counted
  double label_smoothing = 0.0;  // in [0, 1]: the target is (1 - s) one_hot + s / C
};
// cross_entropy(logits (N, C) or (..., C), int64 targets) with PyTorch's options; the defaults give
// the fused primitive of ops/loss/cross_entropy.h.
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, const CrossEntropyOptions& options);

}  // namespace ember
