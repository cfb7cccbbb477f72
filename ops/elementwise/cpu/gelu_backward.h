// GELU's (tanh form) backward in one pass: g * dy/dx from x, instead of the dozen elementwise ops
// of its composite derivative (unary.cpp's gelu_tanh_grad, which stays the rule when a graph of
// the backward is recorded). The fused VJP of gelu_tanh on the CPU.
#pragma once
#include "framework/core/tensor.h"

namespace ember::cpu {

// g * gelu_tanh'(x) for CPU float32 or float64 tensors of one shape; a fresh contiguous tensor.
// AVX2 for float32 where the CPU has it (best_cpu_isa), a scalar loop otherwise.
Tensor gelu_tanh_backward(const Tensor& g, const Tensor& x);
// The same on the scalar loop alone, whatever the CPU (the reference the tests hold the AVX2 path to).
Tensor gelu_tanh_backward_scalar(const Tensor& g, const Tensor& x);

}  // namespace ember::cpu
