// Softmax family over one dim, each computed in one numerically stable pass (max subtracted).
#pragma once
#include "framework/core/tensor.h"

namespace ember {

Tensor softmax(const Tensor& x, int64_t dim = -1);
Tensor log_softmax(const Tensor& x, int64_t dim = -1);
Tensor logsumexp(const Tensor& x, int64_t dim = -1, bool keepdim = false);

}  // namespace ember
