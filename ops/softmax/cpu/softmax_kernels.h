// CPU kernels of the softmax family: one online pass per row finds the running max and the sum
// of exp(x - max) together (rescaling the sum when the max grows), then softmax and log_softmax
// write the row once more. Rows along any dim and any strides; float32 and float64.
#pragma once
#include "framework/core/tensor.h"

namespace ember::cpu {

Tensor softmax(const Tensor& x, int64_t dim);      // dim already wrapped; result contiguous
Tensor log_softmax(const Tensor& x, int64_t dim);
Tensor logsumexp(const Tensor& x, int64_t dim);    // keeps `dim` with size 1

// The backward rules as fused kernels (first-order gradients; softmax.cpp keeps the Ember-op form
// for when the gradient is differentiated again). y is the forward's output, g the incoming
// gradient, both of the same shape, any strides; one read of each per row, the result contiguous.
Tensor softmax_backward(const Tensor& y, const Tensor& g, int64_t dim);      // y * (g - sum(g * y))
Tensor log_softmax_backward(const Tensor& y, const Tensor& g, int64_t dim);  // g - exp(y) * sum(g)

}  // namespace ember::cpu
