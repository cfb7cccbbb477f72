// Unary primitives. Each has a derivative factor d(x, y) (y = f(x)), built from Ember ops so that it
// is itself differentiable; the VJP is g * d and the JVP is t * d.
#include <type_traits>

#include "framework/autograd/trace.h"
#include "ops/elementwise/cpu/loops.h"
#include "ops/elementwise/cpu/unary_avx2.h"
#include "ops/elementwise/elementwise.h"
#include "ops/elementwise/unary_kinds.h"

namespace ember {

#ifdef EMBER_CUDA
namespace cuda {
Tensor unary(UnaryOp op, const Tensor& x);  // ops/elementwise/cuda/unary.cu
}
#endif

namespace {
// One loop instantiation per op, so that the compiler can vectorise each.
template <class T>
Tensor unary_cpu(UnaryOp op, const Tensor& x) {
  if constexpr (std::is_same_v<T, float>) {
    if (x.is_contiguous() && cpu::unary_avx2_supported(op)) {
      Tensor out = empty(x.shape(), x.dtype());
      const float* in = x.data<float>();
      float* o = out.data<float>();
      parallel_for(x.numel(), cpu::kElementwiseGrain, [&](int64_t b, int64_t e) { cpu::unary_avx2(op, in + b, o + b, e - b); });
      return out;
    }
  }
  switch (op) {
#define EMBER_CASE(K) \
  case UnaryOp::K: return cpu::unary_loop<T>(x, x.dtype(), [](T v) { return apply_unary(UnaryOp::K, v); });
    EMBER_CASE(Neg) EMBER_CASE(Exp) EMBER_CASE(Log) EMBER_CASE(Sin) EMBER_CASE(Cos) EMBER_CASE(Tanh)
    EMBER_CASE(Sigmoid) EMBER_CASE(Relu) EMBER_CASE(Gelu) EMBER_CASE(GeluTanh) EMBER_CASE(Sqrt)
    EMBER_CASE(Erf) EMBER_CASE(Abs) EMBER_CASE(Square) EMBER_CASE(Sign)
#undef EMBER_CASE
  }
  throw Error("unary op: unknown kind");
}
}  // namespace

Tensor unary_kernel(UnaryOp op, const Tensor& x) {
#ifdef EMBER_CUDA
  if (x.device() == Device::CUDA) return cuda::unary(op, x);
#endif
  check_cpu(x, "unary op");
  return EMBER_DISPATCH_FLOAT(x.dtype(), "unary op", [&] {
    return unary_cpu<scalar_t>(op, x);
  });
}

namespace {

// Records a unary primitive whose derivative is the factor `deriv(x, y)`.
template <class Deriv>
Tensor unary(const char* name, UnaryOp op, const Tensor& x, Deriv deriv) {
  EMBER_CHECK(x.defined(), name, ": input is undefined");
  EMBER_CHECK(is_floating(x.dtype()), name, ": expected a float32 or float64 tensor, got ", x.dtype(),
              to_string(x.shape()), " (convert with .to(DType::Float32))");
  auto r = autograd::record(
      name, {x}, [&](const autograd::Args& a) { return unary(name, op, a[0], deriv); },
      [&](const Tensor& ans, const autograd::Args& a) -> autograd::VjpFn {
        return [x = a[0], ans, deriv](const Tensor& g, int) { return g * deriv(x, ans); };
      },
      [&](const autograd::Args& t, const Tensor& ans, const autograd::Args& a) { return t[0] * deriv(a[0], ans); });
  return r ? *r : unary_kernel(op, x);
}

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kTwoOverSqrtPi = 1.12837916709551257390;

}  // namespace

Tensor neg(const Tensor& x) {
  return unary("neg", UnaryOp::Neg, x, [](const Tensor& v, const Tensor&) { return scalar_like(v, -1.0); });
}
Tensor exp(const Tensor& x) {
  return unary("exp", UnaryOp::Exp, x, [](const Tensor&, const Tensor& y) { return y; });
}
Tensor log(const Tensor& x) {
  return unary("log", UnaryOp::Log, x, [](const Tensor& v, const Tensor&) { return 1.0 / v; });
}
Tensor sin(const Tensor& x) {
  return unary("sin", UnaryOp::Sin, x, [](const Tensor& v, const Tensor&) { return cos(v); });
}
Tensor cos(const Tensor& x) {
  return unary("cos", UnaryOp::Cos, x, [](const Tensor& v, const Tensor&) { return -sin(v); });
}
Tensor tanh(const Tensor& x) {
  return unary("tanh", UnaryOp::Tanh, x, [](const Tensor&, const Tensor& y) { return 1.0 - y * y; });
}
Tensor sigmoid(const Tensor& x) {
  return unary("sigmoid", UnaryOp::Sigmoid, x, [](const Tensor&, const Tensor& y) { return y * (1.0 - y); });
}
Tensor relu(const Tensor& x) {
  // The mask is a constant: relu's second derivative is zero almost everywhere.
  return unary("relu", UnaryOp::Relu, x,
               [](const Tensor& v, const Tensor&) { return gt(v.detach(), scalar_like(v, 0.0)); });
}
Tensor sqrt(const Tensor& x) {
  return unary("sqrt", UnaryOp::Sqrt, x, [](const Tensor&, const Tensor& y) { return 0.5 / y; });
}
Tensor erf(const Tensor& x) {
  return unary("erf", UnaryOp::Erf, x,
               [](const Tensor& v, const Tensor&) { return kTwoOverSqrtPi * exp(-(v * v)); });
}
Tensor abs(const Tensor& x) {
  return unary("abs", UnaryOp::Abs, x, [](const Tensor& v, const Tensor&) { return unary_kernel(UnaryOp::Sign, v.detach()); });
}
Tensor square(const Tensor& x) {
  return unary("square", UnaryOp::Square, x, [](const Tensor& v, const Tensor&) { return 2.0 * v; });
}
Tensor gelu(const Tensor& x, bool tanh_approximation) {
  if (!tanh_approximation) {
    // d/dx x*Phi(x) = Phi(x) + x*phi(x)
    return unary("gelu", UnaryOp::Gelu, x, [](const Tensor& v, const Tensor&) {
      return 0.5 * (1.0 + erf(v * kInvSqrt2)) + v * (kInvSqrt2Pi * exp(-0.5 * (v * v)));
    });
  }
  // y = x/2 (1 + tanh u), u = c (x + 0.044715 x^3): dy/dx = (1 + tanh u)/2 + x/2 (1 - tanh^2 u) u'
  return unary("gelu_tanh", UnaryOp::GeluTanh, x, [](const Tensor& v, const Tensor&) {
    Tensor th = tanh(kSqrt2OverPi * (v + 0.044715 * (v * v * v)));
    Tensor du = kSqrt2OverPi * (1.0 + (3 * 0.044715) * (v * v));
    return 0.5 * (1.0 + th) + 0.5 * v * (1.0 - th * th) * du;
  });
}

}  // namespace ember
