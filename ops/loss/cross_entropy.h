// Cross-entropy of logits against int64 class targets.
#pragma once
#include "framework/core/tensor.h"

namespace ember {

// logits: (N, C) or (..., C); targets: int64 of shape (N) or (...), each in [0, C).
// Returns the mean over all targets of -log softmax(logits)[target], a 0-d tensor.
Tensor cross_entropy(const Tensor& logits, const Tensor& targets);

}  // namespace ember
