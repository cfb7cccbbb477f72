// The unary elementwise functions, as one enum so that every device implements them in one kernel.
// The scalar formulas are __host__ __device__ so CPU and CUDA kernels share them.
#pragma once
#include <cmath>

#include "framework/core/host_device.h"
#include "framework/core/tensor.h"

namespace ember {

// Each device lists every kind in its dispatch switch (ops/elementwise/unary.cpp, ops/elementwise/cuda).
enum class UnaryOp { Neg, Exp, Log, Sin, Cos, Tanh, Sigmoid, Relu, Gelu, GeluTanh, Sqrt, Erf, Abs, Square, Sign,
                     Log1p, Expm1, Silu };

template <class T>
EMBER_HD inline T apply_unary(UnaryOp op, T x) {
  constexpr T kInvSqrt2 = T(0.70710678118654752440);
  constexpr T kSqrt2OverPi = T(0.79788456080286535588);
  switch (op) {
    case UnaryOp::Neg: return -x;
    case UnaryOp::Exp: return std::exp(x);
    case UnaryOp::Log: return std::log(x);
    case UnaryOp::Sin: return std::sin(x);
    case UnaryOp::Cos: return std::cos(x);
    case UnaryOp::Tanh: return std::tanh(x);
    case UnaryOp::Sigmoid: return T(1) / (T(1) + std::exp(-x));
    case UnaryOp::Relu: return x < T(0) ? T(0) : x;  // NaN passes through
    case UnaryOp::Gelu: return T(0.5) * x * (T(1) + std::erf(x * kInvSqrt2));
    case UnaryOp::GeluTanh: return T(0.5) * x * (T(1) + std::tanh(kSqrt2OverPi * (x + T(0.044715) * x * x * x)));
    case UnaryOp::Sqrt: return std::sqrt(x);
    case UnaryOp::Erf: return std::erf(x);
    case UnaryOp::Abs: return x < T(0) ? -x : x;
    case UnaryOp::Square: return x * x;
    case UnaryOp::Sign: return T((x > T(0)) - (x < T(0)));
    case UnaryOp::Log1p: return std::log1p(x);
    case UnaryOp::Expm1: return std::expm1(x);
    case UnaryOp::Silu: return x / (T(1) + std::exp(-x));
  }
  return x;
}

// Unary functions with one or two scalar parameters (a, b), kept apart from UnaryOp so that the
// parameter-free kernels keep their one-argument form.
enum class UnaryParamOp {
  Clamp,      // a <= x <= b (NaN passes through)
  LeakyRelu,  // x, or a * x below zero
  Elu,        // x, or a * (e^x - 1) below zero
  Softplus,   // log(1 + e^(a x)) / a, or x where a x > b (PyTorch's beta and threshold)
};

template <class T>
EMBER_HD inline T apply_unary_param(UnaryParamOp op, T x, T a, T b) {
  switch (op) {
    case UnaryParamOp::Clamp: return x < a ? a : (x > b ? b : x);
    case UnaryParamOp::LeakyRelu: return x < T(0) ? a * x : x;
    case UnaryParamOp::Elu: return x < T(0) ? a * std::expm1(x) : x;
    // log1p(e^z) for z <= b: e^z underflows harmlessly for very negative z; above b it is z to
    // working precision, and e^z would overflow.
    case UnaryParamOp::Softplus: return a * x > b ? x : std::log1p(std::exp(a * x)) / a;
  }
  return x;
}

// Runs op over x on x's device; returns a fresh contiguous tensor. Not recorded by autograd.
Tensor unary_kernel(UnaryOp op, const Tensor& x);

}  // namespace ember
