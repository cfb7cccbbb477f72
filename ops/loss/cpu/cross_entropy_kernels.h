// CPU cross-entropy: per row of logits, one online pass gives log-sum-exp, and the loss is
// lse - logits[target]; the mean over rows is summed in double, in row order (deterministic).
#pragma once
#include "framework/core/tensor.h"

namespace ember::cpu {

// logits (..., C) float, any strides; targets int64 of shape (...), checked to lie in [0, C).
// Returns the mean loss as a 0-d tensor of the logits' dtype.
Tensor cross_entropy(const Tensor& logits, const Tensor& targets);

// (softmax(logits) - one_hot(targets)) * scale, the loss's gradient with scale = g / N, in one
// read of each row of logits (the write pass reads it again from cache). Contiguous result.
Tensor cross_entropy_backward(const Tensor& logits, const Tensor& targets, double scale);

// A float tensor of shape targets.shape + (C) with 1 at each target, 0 elsewhere.
Tensor one_hot(const Tensor& targets, int64_t classes, DType dtype);

}  // namespace ember::cpu
