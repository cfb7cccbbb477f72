// The binary elementwise functions as one enum, with scalar formulas shared by CPU and CUDA kernels.
#pragma once
#include <cmath>
#include <type_traits>

#include "framework/core/tensor.h"
#include "ops/elementwise/unary_kinds.h"

namespace ember {

// Gt..Ne are the comparisons: their result is Bool (1 or 0 in T from apply_binary).
enum class BinaryOp { Add, Sub, Mul, Div, Pow, Max, Min, Gt, Ge, Lt, Le, Eq, Ne };

inline const char* binary_name(BinaryOp op) {
  static const char* names[] = {"add", "sub", "mul", "div", "pow", "maximum", "minimum", "gt", "ge", "lt", "le", "eq", "ne"};
  const int i = int(op);  // an out-of-range value (a cast from a bad int) names itself, not garbage
  return i >= 0 && i < int(sizeof names / sizeof names[0]) ? names[i] : "unknown binary op";
}

template <class T>
EMBER_HD inline T apply_binary(BinaryOp op, T x, T y) {
  switch (op) {
    case BinaryOp::Add: return x + y;
    case BinaryOp::Sub: return x - y;
    case BinaryOp::Mul:
      if constexpr (std::is_same_v<T, bool>) return x && y;  // a product of truth values
      else return x * y;
    case BinaryOp::Div:
      if constexpr (std::is_integral_v<T>) {
        // No SIGFPE on bad input: x / 0 is 0, and MIN / -1 wraps to MIN (two's complement, as
        // PyTorch does), computed as an unsigned negation so that no signed overflow happens.
        if (y == 0) return T(0);
        if constexpr (std::is_signed_v<T>)
          if (y == T(-1)) return T(std::make_unsigned_t<T>(0) - std::make_unsigned_t<T>(x));
        return T(x / y);
      } else {
        return x / y;
      }
    case BinaryOp::Pow: return T(std::pow(x, y));
    // NaN propagates from either side (x != x only for a NaN).
    case BinaryOp::Max: return (x >= y || x != x) ? x : y;
    case BinaryOp::Min: return (x <= y || x != x) ? x : y;
    case BinaryOp::Gt: return T(x > y);
    case BinaryOp::Ge: return T(x >= y);
    case BinaryOp::Lt: return T(x < y);
    case BinaryOp::Le: return T(x <= y);
    case BinaryOp::Eq: return T(x == y);
    case BinaryOp::Ne: return T(x != y);
  }
  return x;
}

inline bool is_comparison(BinaryOp op) { return op >= BinaryOp::Gt; }

// Runs op with broadcasting on the operands' device; a fresh contiguous result, not recorded.
// Comparisons give Bool; the operands share a dtype (Bool included for comparisons).
Tensor binary_kernel(BinaryOp op, const Tensor& a, const Tensor& b);

}  // namespace ember
