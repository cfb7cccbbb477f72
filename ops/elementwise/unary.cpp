// Unary primitives: one per line of unary_list.h (a kernel kind and a derivative factor d(x, y),
// y = f(x), built from Ember ops so that it is itself differentiable; the VJP is g * d and the JVP
// is t * d), and the functions with scalar parameters.
#include <limits>
#include <type_traits>

#include "framework/core/autograd/primitive.h"
#include "ops/elementwise/cpu/half_cast.h"
#include "ops/op_list.h"
#include "ops/elementwise/cpu/gelu_backward.h"
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
#define EMBER_CASE(K, ...) \
  case UnaryOp::K: return cpu::unary_loop<T>(x, x.dtype(), [](T v) { return apply_unary(UnaryOp::K, v); });
    EMBER_UNARY_OPS(EMBER_CASE)
#undef EMBER_CASE
  }
  throw Error("unary op: unknown kind");
}

// The 16-bit floats widen to float32 (vector loops), take the float32 kernel (AVX2 where it has
// one) and round once.
Tensor unary_cpu_kernel(UnaryOp op, const Tensor& x) {
  check_cpu(x, "unary op");
  if (is_half(x.dtype())) return cpu::cast_half(unary_cpu_kernel(op, cpu::cast_half(x, DType::Float32)), x.dtype());
  return EMBER_DISPATCH_FLOAT(x.dtype(), "unary op", [&] { return unary_cpu<scalar_t>(op, x); });
}
}  // namespace

Tensor unary_kernel(UnaryOp op, const Tensor& x) {
  return x.device() == Device::CUDA ? cuda_kernels::unary(op, x) : unary_cpu_kernel(op, x);
}

namespace {

// Declares the elementwise primitive `name` with derivative factor deriv(x, y), y = f(x): the VJP is
// g * deriv and the JVP t * deriv. The node keeps x and y only where deriv reads them.
enum Reads { kX = 1, kY = 2 };
using Deriv = Tensor (*)(const Tensor& x, const Tensor& y);

Primitive<> unary_primitive(const char* name, UnaryOp op, unsigned reads, Deriv deriv) {
  Primitive<> p(name);
  p.cpu([op](const Args& a, const NoAttrs&) { return unary_cpu_kernel(op, a[0]); })
      .cuda([op](const Args& a, const NoAttrs&) { return cuda_kernels::unary(op, a[0]); })
      .dtypes({DType::Float32, DType::Float64, DType::BFloat16, DType::Float16})
      .saves(reads & kX ? std::vector<int>{0} : std::vector<int>{}, reads & kY)
      .vjp([deriv](const Tensor& g, const OpCall<>& c) { return Grads{g * deriv(c.in[0], c.out)}; })
      .jvp([deriv](const Args& t, const OpCall<>& c) { return t[0] * deriv(c.in[0], c.out); });
  return p;
}

// The same for the functions with scalar parameters; the factor also reads them.
struct UnaryParams {
  UnaryParamOp op;
  double a, b;
};
using ParamDeriv = Tensor (*)(const Tensor& x, const Tensor& y, const UnaryParams& p);

// One loop instantiation per kind, as for unary_cpu.
template <class T>
Tensor unary_param_cpu(const Tensor& x, const UnaryParams& p) {
  const T a = T(p.a), b = T(p.b);
  switch (p.op) {
#define EMBER_CASE(K)   \
  case UnaryParamOp::K: \
    return cpu::unary_loop<T>(x, x.dtype(), [a, b](T v) { return apply_unary_param(UnaryParamOp::K, v, a, b); });
    EMBER_CASE(Clamp) EMBER_CASE(LeakyRelu) EMBER_CASE(Elu) EMBER_CASE(Softplus)
#undef EMBER_CASE
  }
  throw Error("unary op: unknown kind");
}

Tensor unary_param_cpu_kernel(const Tensor& x, const UnaryParams& p) {
  check_cpu(x, "unary op");
  if (is_half(x.dtype())) return cpu::cast_half(unary_param_cpu_kernel(cpu::cast_half(x, DType::Float32), p), x.dtype());
  return EMBER_DISPATCH_FLOAT(x.dtype(), "unary op", [&] { return unary_param_cpu<scalar_t>(x, p); });
}

Primitive<UnaryParams> unary_param_primitive(const char* name, unsigned reads, ParamDeriv deriv) {
  Primitive<UnaryParams> p(name);
  p.cpu([](const Args& a, const UnaryParams& at) { return unary_param_cpu_kernel(a[0], at); })
      .dtypes({DType::Float32, DType::Float64, DType::BFloat16, DType::Float16})
      .cuda([](const Args& a, const UnaryParams& at) { return cuda_kernels::unary_param(at.op, a[0], at.a, at.b); })
      .saves(reads & kX ? std::vector<int>{0} : std::vector<int>{}, reads & kY)
      .vjp([deriv](const Tensor& g, const OpCall<UnaryParams>& c) { return Grads{g * deriv(c.in[0], c.out, c.attrs)}; })
      .jvp([deriv](const Args& t, const OpCall<UnaryParams>& c) { return t[0] * deriv(c.in[0], c.out, c.attrs); });
  return p;
}

// 1 where x > 0, else `below`: a constant (the kink's second derivative is zero almost everywhere).
Tensor positive_mask(const Tensor& x, double below) {
  Tensor pos = cast(x.detach().gt(0.0), x.dtype());
  return below == 0.0 ? pos : pos + below * (1.0 - pos);
}

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kTwoOverSqrtPi = 1.12837916709551257390;

// The derivatives that take more than an expression in unary_list.h.
Tensor step(const Tensor& x) { return positive_mask(x, 0.0); }
// d/dx x*Phi(x) = Phi(x) + x*phi(x)
Tensor gelu_grad(const Tensor& x) {
  return 0.5 * (1.0 + ember::erf(x * kInvSqrt2)) + x * (kInvSqrt2Pi * ember::exp(-0.5 * (x * x)));
}
// y = x/2 (1 + tanh u), u = c (x + 0.044715 x^3): dy/dx = (1 + tanh u)/2 + x/2 (1 - tanh^2 u) u'
Tensor gelu_tanh_grad(const Tensor& x) {
  Tensor th = ember::tanh(kSqrt2OverPi * (x + 0.044715 * (x * x * x)));
  Tensor du = kSqrt2OverPi * (1.0 + (3 * 0.044715) * (x * x));
  return 0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * du;
}
// d/dx x s(x) = s (1 + x (1 - s))
Tensor silu_grad(const Tensor& x) {
  Tensor s = ember::sigmoid(x);
  return s * (1.0 + x * (1.0 - s));
}

// Every unary primitive, declared once (constructed on first use or by declare_unary_ops()): one
// per line of unary_list.h, then the parameterised ones.
struct UnaryPrims {
  // GPT-2's MLP activation in both forms: its backward in one pass on the CPU (g * d in the
  // composite rules above is a dozen elementwise passes over the MLP's widest tensor).
  UnaryPrims() {
    gelu_tanh.fused_vjp(Device::CPU, [](const Tensor& g, const OpCall<>& c) {
      return Grads{cpu::gelu_tanh_backward(g, c.in[0])};
    });
    gelu.fused_vjp(Device::CPU, [](const Tensor& g, const OpCall<>& c) {
      return Grads{cpu::gelu_backward(g, c.in[0])};
    });
  }
#define EMBER_PRIMITIVE(K, name, formula, reads, deriv)                                        \
  Primitive<> name = unary_primitive(#name, UnaryOp::K, reads, [](const Tensor& x, const Tensor& y) { \
    return deriv;                                                                              \
  });
  EMBER_UNARY_OPS(EMBER_PRIMITIVE)
#undef EMBER_PRIMITIVE
  // Strictly inside (a, b) the gradient passes; on a bound and outside it is zero, as PyTorch 2.15
  // does for scalar bounds (measured against the peer venv; older releases passed it on the bounds).
  Primitive<UnaryParams> clamp = unary_param_primitive("clamp", kX, [](const Tensor& v, const Tensor&, const UnaryParams& p) {
    Tensor x = v.detach();
    return cast(logical_and(x.gt(p.a), x.lt(p.b)), x.dtype());
  });
  Primitive<UnaryParams> leaky_relu = unary_param_primitive(
      "leaky_relu", kX, [](const Tensor& v, const Tensor&, const UnaryParams& p) { return positive_mask(v, p.a); });
  // Below zero y = a (e^x - 1), so dy/dx = y + a, differentiable again through y.
  Primitive<UnaryParams> elu = unary_param_primitive("elu", kX | kY, [](const Tensor& v, const Tensor& y, const UnaryParams& p) {
    Tensor pos = positive_mask(v, 0.0);
    return pos + (1.0 - pos) * (y + p.a);
  });
  // d/dx log(1 + e^(a x)) / a = sigmoid(a x); 1 above the threshold, where the forward is x.
  Primitive<UnaryParams> softplus = unary_param_primitive("softplus", kX, [](const Tensor& v, const Tensor&, const UnaryParams& p) {
    Tensor linear = cast((p.a * v.detach()).gt(p.b), v.dtype());
    return linear + (1.0 - linear) * ember::sigmoid(p.a * v);
  });
};

const UnaryPrims& prims() {
  static const UnaryPrims p;
  return p;
}

template <class A>
Tensor apply(const Primitive<A>& p, const Tensor& x, const A& attrs = A()) {
  const char* name = p.info().node_name;
  EMBER_CHECK(x.defined(), name, ": input is undefined");
  EMBER_CHECK(is_floating(x.dtype()), name, ": expected a floating tensor (float32, float64, bfloat16, float16), got ", x.dtype(),
              to_string(x.shape()), " (convert with .to(DType::Float32))");
  return p({x}, attrs);
}

}  // namespace

void declare_unary_ops() { prims(); }

#define EMBER_PUBLIC(K, name, ...) \
  Tensor name(const Tensor& x) { return apply(prims().name, x); }
EMBER_UNARY_OPS(EMBER_PUBLIC)
#undef EMBER_PUBLIC

Tensor clamp(const Tensor& x, double lo, double hi) {
  EMBER_CHECK(!(lo > hi), "clamp: the lower bound ", lo, " is above the upper bound ", hi);
  return apply(prims().clamp, x, UnaryParams{UnaryParamOp::Clamp, lo, hi});
}
Tensor clamp_min(const Tensor& x, double lo) { return clamp(x, lo, std::numeric_limits<double>::infinity()); }
Tensor clamp_max(const Tensor& x, double hi) { return clamp(x, -std::numeric_limits<double>::infinity(), hi); }
Tensor leaky_relu(const Tensor& x, double negative_slope) {
  return apply(prims().leaky_relu, x, UnaryParams{UnaryParamOp::LeakyRelu, negative_slope, 0.0});
}
Tensor elu(const Tensor& x, double alpha) { return apply(prims().elu, x, UnaryParams{UnaryParamOp::Elu, alpha, 0.0}); }
Tensor softplus(const Tensor& x, double beta, double threshold) {
  EMBER_CHECK(beta > 0, "softplus: beta must be positive, got ", beta);
  return apply(prims().softplus, x, UnaryParams{UnaryParamOp::Softplus, beta, threshold});
}

Tensor gelu(const Tensor& x, bool tanh_approximation) { return tanh_approximation ? gelu_tanh(x) : gelu(x); }

}  // namespace ember
