// The unary elementwise functions, as one enum so that every device implements them in one kernel.
// The scalar formulas (from unary_list.h) are __host__ __device__ so CPU and CUDA kernels share them.
#pragma once
#include <cmath>

#include "framework/core/host_device.h"
#include "framework/core/tensor.h"
#include "ops/elementwise/unary_list.h"

namespace ember {

// One kind per line of unary_list.h.
enum class UnaryOp {
#define EMBER_KIND(K, ...) K,
  EMBER_UNARY_OPS(EMBER_KIND)
#undef EMBER_KIND
};

template <class T>
EMBER_HD inline T apply_unary(UnaryOp op, T x) {
  constexpr T kInvSqrt2 = T(0.70710678118654752440);
  constexpr T kSqrt2OverPi = T(0.79788456080286535588);
  switch (op) {
#define EMBER_FORMULA(K, name, formula, ...) \
  case UnaryOp::K: return formula;
    EMBER_UNARY_OPS(EMBER_FORMULA)
#undef EMBER_FORMULA
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
