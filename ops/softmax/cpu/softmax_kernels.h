// CPU kernels of the softmax family: one online pass per row finds the running max and the sum
// of exp(x - max) together (rescaling the sum when the max grows), then softmax and log_softmax
// write the row once more. Rows along any dim and any strides; float32 and float64.
#pragma once
#include "framework/tensor.h"

namespace ember::cpu {

Tensor softmax(const Tensor& x, int64_t dim);      // dim already wrapped; result contiguous
Tensor log_softmax(const Tensor& x, int64_t dim);
Tensor logsumexp(const Tensor& x, int64_t dim);    // keeps `dim` with size 1

}  // namespace ember::cpu
