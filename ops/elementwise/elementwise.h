// Elementwise primitives. Binary ops broadcast as NumPy does; both operands must share dtype and
// device (a double on either side becomes a 0-d tensor of the other's dtype), except that a Bool
// operand takes the other's dtype (framework/core/dtype.h has the Bool rules). Each op's VJP and JVP
// live beside its kernel call in unary.cpp / binary.cpp and are written with these same ops, so
// derivatives of derivatives work.
#pragma once
#include "framework/core/tensor.h"
#include "ops/elementwise/unary_list.h"

namespace ember {

Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& b);  // a > 0 where b's gradient is wanted
Tensor pow(const Tensor& a, double exponent);
// Where a == b the gradient is split half and half between the operands, as PyTorch does.
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);

// One function per line of unary_list.h: neg, exp, log, sin, cos, tanh, sigmoid, relu, gelu (the
// exact, erf form), gelu_tanh (GPT-2's tanh form), sqrt, erf, abs, square, sign (-1, 0 or 1; its
// gradient is zero), log1p (log(1 + x), accurate for small x), expm1 (e^x - 1, likewise), silu
// (x * sigmoid(x)). Each is `Tensor NAME(const Tensor& x)`.
#define EMBER_DECLARE_UNARY(K, name, ...) Tensor name(const Tensor& x);
EMBER_UNARY_OPS(EMBER_DECLARE_UNARY)
#undef EMBER_DECLARE_UNARY
Tensor gelu(const Tensor& x, bool tanh_approximation);  // gelu_tanh(x) where tanh_approximation
// x limited to [lo, hi]; the gradient passes where lo < x < hi (zero on the bounds, as PyTorch 2.15).
Tensor clamp(const Tensor& x, double lo, double hi);
Tensor clamp_min(const Tensor& x, double lo);
Tensor clamp_max(const Tensor& x, double hi);
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);
Tensor elu(const Tensor& x, double alpha = 1.0);
// log(1 + e^(beta x)) / beta, and x where beta x > threshold; stable for any x.
Tensor softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0);

// Comparisons: not differentiable; a Bool tensor, true where the relation holds.
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);

// Logical ops (ops/elementwise/logical.cpp): Bool results, not differentiable; an operand of any
// dtype counts as true where it is nonzero. Binary ones broadcast.
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& x);
// 0-d Bool: whether any / every element is nonzero (all of an empty tensor is true, as in PyTorch).
Tensor any(const Tensor& x);
Tensor all(const Tensor& x);

// where(cond, a, b): a where cond is true (Bool) or nonzero (other dtypes), else b; cond
// broadcasts with a and b.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
// x with `value` where mask is true (or nonzero).
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value);

Tensor cast(const Tensor& x, DType dtype);  // differentiable between float dtypes; to Bool: x != 0

// A 0-d tensor holding v, of x's dtype and device.
Tensor scalar_like(const Tensor& x, double v);
// The double side of an operator with x: scalar_like, except float32 beside a Bool x (mask * 0.5 is
// a float, as in PyTorch, where a Bool 0.5 would be true).
Tensor scalar_operand(const Tensor& x, double v);

inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator-(const Tensor& a) { return neg(a); }
inline Tensor operator+(const Tensor& a, double b) { return add(a, scalar_operand(a, b)); }
inline Tensor operator-(const Tensor& a, double b) { return sub(a, scalar_operand(a, b)); }
inline Tensor operator*(const Tensor& a, double b) { return mul(a, scalar_operand(a, b)); }
inline Tensor operator/(const Tensor& a, double b) { return div(a, scalar_operand(a, b)); }
inline Tensor operator+(double a, const Tensor& b) { return add(scalar_operand(b, a), b); }
inline Tensor operator-(double a, const Tensor& b) { return sub(scalar_operand(b, a), b); }
inline Tensor operator*(double a, const Tensor& b) { return mul(scalar_operand(b, a), b); }
inline Tensor operator/(double a, const Tensor& b) { return div(scalar_operand(b, a), b); }

}  // namespace ember
