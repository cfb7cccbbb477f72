// Unary primitives, one line each: a kernel kind and a derivative factor d(x, y) (y = f(x)), built
// from Ember ops so that it is itself differentiable; the VJP is g * d and the JVP is t * d.
#include <type_traits>

#include "framework/autograd/primitive.h"
#include "ops/op_list.h"
#include "ops/elementwise/cpu/loops.h"
#include "ops/elementwise/cpu/unary_avx2.h"
#include "ops/elementwise/elementwise.h"
#include "ops/elementwise/unary_kinds.h"
#include "ops/cuda_kernels.h"

namespace ember {

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
  if (x.device() == Device::CUDA) return cuda_kernels::unary(op, x);
  check_cpu(x, "unary op");
  return EMBER_DISPATCH_FLOAT(x.dtype(), "unary op", [&] {
    return unary_cpu<scalar_t>(op, x);
  });
}

namespace {

// Declares the elementwise primitive `name` with derivative factor deriv(x, y), y = f(x): the VJP is
// g * deriv and the JVP t * deriv. The node keeps x and y only where deriv reads them.
enum Reads { kX = 1, kY = 2 };
using Deriv = Tensor (*)(const Tensor& x, const Tensor& y);

Primitive<> unary_primitive(const char* name, UnaryOp op, unsigned reads, Deriv deriv) {
  Primitive<> p(name);
  p.cpu([op](const Args& a, const NoAttrs&) { return unary_kernel(op, a[0]); })
      .cuda([op](const Args& a, const NoAttrs&) { return cuda_kernels::unary(op, a[0]); })
      .saves(reads & kX ? std::vector<int>{0} : std::vector<int>{}, reads & kY)
      .vjp([deriv](const Tensor& g, const OpCall<>& c) { return Grads{g * deriv(c.in[0], c.out)}; })
      .jvp([deriv](const Args& t, const OpCall<>& c) { return t[0] * deriv(c.in[0], c.out); });
  return p;
}

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kTwoOverSqrtPi = 1.12837916709551257390;

// Every unary primitive, declared once (constructed on first use or by declare_unary_ops()).
struct UnaryPrims {
  Primitive<> neg = unary_primitive("neg", UnaryOp::Neg, kX, [](const Tensor& v, const Tensor&) { return scalar_like(v, -1.0); });
  Primitive<> exp = unary_primitive("exp", UnaryOp::Exp, kY, [](const Tensor&, const Tensor& y) { return y; });
  Primitive<> log = unary_primitive("log", UnaryOp::Log, kX, [](const Tensor& v, const Tensor&) { return 1.0 / v; });
  Primitive<> sin = unary_primitive("sin", UnaryOp::Sin, kX, [](const Tensor& v, const Tensor&) { return ember::cos(v); });
  Primitive<> cos = unary_primitive("cos", UnaryOp::Cos, kX, [](const Tensor& v, const Tensor&) { return -ember::sin(v); });
  Primitive<> tanh = unary_primitive("tanh", UnaryOp::Tanh, kY, [](const Tensor&, const Tensor& y) { return 1.0 - y * y; });
  Primitive<> sigmoid =
      unary_primitive("sigmoid", UnaryOp::Sigmoid, kY, [](const Tensor&, const Tensor& y) { return y * (1.0 - y); });
  // The mask is a constant: relu's second derivative is zero almost everywhere.
  Primitive<> relu = unary_primitive("relu", UnaryOp::Relu, kX,
                                     [](const Tensor& v, const Tensor&) { return gt(v.detach(), scalar_like(v, 0.0)); });
  Primitive<> sqrt = unary_primitive("sqrt", UnaryOp::Sqrt, kY, [](const Tensor&, const Tensor& y) { return 0.5 / y; });
  Primitive<> erf = unary_primitive("erf", UnaryOp::Erf, kX,
                                    [](const Tensor& v, const Tensor&) { return kTwoOverSqrtPi * ember::exp(-(v * v)); });
  Primitive<> abs = unary_primitive("abs", UnaryOp::Abs, kX,
                                    [](const Tensor& v, const Tensor&) { return unary_kernel(UnaryOp::Sign, v.detach()); });
  Primitive<> square = unary_primitive("square", UnaryOp::Square, kX, [](const Tensor& v, const Tensor&) { return 2.0 * v; });
  // d/dx x*Phi(x) = Phi(x) + x*phi(x)
  Primitive<> gelu = unary_primitive("gelu", UnaryOp::Gelu, kX, [](const Tensor& v, const Tensor&) {
    return 0.5 * (1.0 + ember::erf(v * kInvSqrt2)) + v * (kInvSqrt2Pi * ember::exp(-0.5 * (v * v)));
  });
  // y = x/2 (1 + tanh u), u = c (x + 0.044715 x^3): dy/dx = (1 + tanh u)/2 + x/2 (1 - tanh^2 u) u'
  Primitive<> gelu_tanh = unary_primitive("gelu_tanh", UnaryOp::GeluTanh, kX, [](const Tensor& v, const Tensor&) {
    Tensor th = ember::tanh(kSqrt2OverPi * (v + 0.044715 * (v * v * v)));
    Tensor du = kSqrt2OverPi * (1.0 + (3 * 0.044715) * (v * v));
    return 0.5 * (1.0 + th) + 0.5 * v * (1.0 - th * th) * du;
  });
};

const UnaryPrims& prims() {
  static const UnaryPrims p;
  return p;
}

Tensor apply(const Primitive<>& p, const Tensor& x) {
  const char* name = p.info().node_name;
  EMBER_CHECK(x.defined(), name, ": input is undefined");
  EMBER_CHECK(is_floating(x.dtype()), name, ": expected a float32 or float64 tensor, got ", x.dtype(),
              to_string(x.shape()), " (convert with .to(DType::Float32))");
  return p({x});
}

}  // namespace

void declare_unary_ops() { prims(); }

Tensor neg(const Tensor& x) { return apply(prims().neg, x); }
Tensor exp(const Tensor& x) { return apply(prims().exp, x); }
Tensor log(const Tensor& x) { return apply(prims().log, x); }
Tensor sin(const Tensor& x) { return apply(prims().sin, x); }
Tensor cos(const Tensor& x) { return apply(prims().cos, x); }
Tensor tanh(const Tensor& x) { return apply(prims().tanh, x); }
Tensor sigmoid(const Tensor& x) { return apply(prims().sigmoid, x); }
Tensor relu(const Tensor& x) { return apply(prims().relu, x); }
Tensor sqrt(const Tensor& x) { return apply(prims().sqrt, x); }
Tensor erf(const Tensor& x) { return apply(prims().erf, x); }
Tensor abs(const Tensor& x) { return apply(prims().abs, x); }
Tensor square(const Tensor& x) { return apply(prims().square, x); }
Tensor gelu(const Tensor& x, bool tanh_approximation) {
  return apply(tanh_approximation ? prims().gelu_tanh : prims().gelu, x);
}

}  // namespace ember
