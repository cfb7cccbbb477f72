// GELU's backward in one pass, both forms: g * dy/dx from x, instead of the dozen elementwise ops
// of the composite derivatives (unary.cpp's gelu_grad and gelu_tanh_grad, which stay the rules when
// a graph of the backward is recorded). The fused VJPs of gelu and gelu_tanh on the CPU.
#pragma once
#include "framework/core/tensor.h"

namespace ember::cpu {

// g * gelu_tanh'(x) for CPU floating tensors of one shape and dtype (16-bit ones computed in float32);
// a fresh contiguous tensor.
// AVX2 for float32 where the CPU has it (best_cpu_isa), a scalar loop otherwise.
Tensor gelu_tanh_backward(const Tensor& g, const Tensor& x);
// The same on the scalar loop alone, whatever the CPU (the reference the tests hold the AVX2 path to).
Tensor gelu_tanh_backward_scalar(const Tensor& g, const Tensor& x);
// g * gelu'(x) for the exact form x Phi(x) (PyTorch's nn.GELU() default); the same two paths.
Tensor gelu_backward(const Tensor& g, const Tensor& x);
Tensor gelu_backward_scalar(const Tensor& g, const Tensor& x);

}  // namespace ember::cpu
