// Every parameter-free unary op, one line each. The rest is generated from this list: the UnaryOp
// kind and its scalar formula (unary_kinds.h, shared by the CPU and CUDA kernels), both devices'
// dispatch switches (unary.cpp, cuda/elementwise.cu), the primitive with its derivative, the public
// function ember::NAME (unary.cpp, elementwise.h) and the Python binding (python/src/ops.cpp).
//
//   X(Kind, name, y = f(x) for a scalar x of type T, what the derivative reads (kX, kY, kX | kY),
//     dy/dx in Ember ops of the tensors x and y)
//
// The derivative is written with Ember's differentiable ops, so that it can be differentiated again;
// a kink's mask is a constant (detached), since its own derivative is zero almost everywhere.
// Adding an op: its line here, its spec (tests/op_table/specs_elementwise.cpp) and its name in
// python/ember/__init__.py; a vectorised CPU loop (cpu/unary_avx2.cpp) is optional.
#pragma once

#define EMBER_UNARY_OPS(X)                                                                                \
  X(Neg, neg, -x, kX, scalar_like(x, -1.0))                                                               \
  X(Exp, exp, std::exp(x), kY, y)                                                                         \
  X(Log, log, std::log(x), kX, 1.0 / x)                                                                   \
  X(Sin, sin, std::sin(x), kX, ember::cos(x))                                                             \
  X(Cos, cos, std::cos(x), kX, -ember::sin(x))                                                            \
  X(Tanh, tanh, std::tanh(x), kY, 1.0 - y * y)                                                            \
  X(Sigmoid, sigmoid, T(1) / (T(1) + std::exp(-x)), kY, y * (1.0 - y))                                    \
  X(Relu, relu, x < T(0) ? T(0) : x, kX, step(x))                                                         \
  X(Gelu, gelu, T(0.5) * x * (T(1) + std::erf(x * kInvSqrt2)), kX, gelu_grad(x))                          \
  X(GeluTanh, gelu_tanh, T(0.5) * x * (T(1) + std::tanh(kSqrt2OverPi * (x + T(0.044715) * x * x * x))),  \
    kX, gelu_tanh_grad(x))                                                                                \
  X(Sqrt, sqrt, std::sqrt(x), kY, 0.5 / y)                                                                \
  X(Erf, erf, std::erf(x), kX, kTwoOverSqrtPi * ember::exp(-(x * x)))                                     \
  X(Abs, abs, x < T(0) ? -x : x, kX, unary_kernel(UnaryOp::Sign, x.detach()))                             \
  X(Square, square, x * x, kX, 2.0 * x)                                                                   \
  X(Sign, sign, T((x > T(0)) - (x < T(0))), kX, scalar_like(x, 0.0))                                      \
  X(Log1p, log1p, std::log1p(x), kX, 1.0 / (1.0 + x))                                                     \
  X(Expm1, expm1, std::expm1(x), kY, y + 1.0)                                                             \
  X(Silu, silu, x / (T(1) + std::exp(-x)), kX, silu_grad(x))
