// CPU cross-entropy: per row of logits, one online pass gives log-sum-exp, and the loss is
// lse - logits[target]; the mean over rows is summed in double, in row order (deterministic).
#pragma once
#include "framework/tensor.h"

namespace ember::cpu {

// logits (..., C) float, any strides; targets int64 of shape (...), checked to lie in [0, C).
// Returns the mean loss as a 0-d tensor of the logits' dtype.
Tensor cross_entropy(const Tensor& logits, const Tensor& targets);

// A float tensor of shape targets.shape + (C) with 1 at each target, 0 elsewhere.
Tensor one_hot(const Tensor& targets, int64_t classes, DType dtype);

}  // namespace ember::cpu
