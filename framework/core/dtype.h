// Element types and devices. Ember keeps the set small on purpose: float32 for models,
// float64 for references and gradcheck, int64 for indices and targets, bool for masks.
//
// Bool, as PyTorch users expect it (one byte per element, 0 or 1):
// - eq, ne, lt, le, gt, ge return Bool, whatever the operands' dtype, and carry no gradient.
// - logical_and/or/xor/not return Bool; a non-bool operand counts as true where nonzero.
// - where(cond, a, b) and masked_fill(x, mask, v) take a Bool mask (other dtypes: nonzero is true).
// - Arithmetic (add, sub, mul, div, pow, maximum, minimum) with one Bool operand converts it to the
//   other operand's dtype (true = 1), so `mask * x` works; with two Bool operands it is an error
//   naming the op (say what you mean: logical_and/logical_or, or .to(DType::Float32) first). A double
//   on the other side of an operator (mask * 0.5, 1.0 - mask) makes a float32 result.
// - x.to(DType::Bool) is x != 0; Bool to a number gives 1 for true and 0 for false.
// - sum of Bool counts the true elements (int64); other reductions and the unary math functions
//   reject Bool with an error naming the op.
#pragma once
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>

#include "framework/core/error.h"

namespace ember {

enum class DType { Float32, Float64, Int64, Bool };

inline size_t itemsize(DType t) {
  switch (t) {
    case DType::Float32: return 4;
    case DType::Bool: return 1;
    case DType::Float64:
    case DType::Int64: return 8;
  }
  return 8;
}
inline const char* name(DType t) {
  switch (t) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Int64: return "int64";
    case DType::Bool: return "bool";
  }
  return "?";
}
inline bool is_floating(DType t) { return t == DType::Float32 || t == DType::Float64; }
inline std::ostream& operator<<(std::ostream& os, DType t) { return os << name(t); }

template <class T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::Float32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::Float64; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::Int64; };
template <> struct dtype_of<bool> { static constexpr DType value = DType::Bool; };
static_assert(sizeof(bool) == 1, "DType::Bool stores C++ bool, one byte per element");

enum class Device { CPU, CUDA };
inline const char* name(Device d) { return d == Device::CPU ? "cpu" : "cuda"; }
inline std::ostream& operator<<(std::ostream& os, Device d) { return os << name(d); }
Device parse_device(const std::string& s);  // "cpu" | "cuda", else ember::Error

// Calls f(T{}) with T the C++ type of `t`; used by kernels to be written once for all types.
#define EMBER_DISPATCH_FLOAT(dtype, opname, ...)                                       \
  [&] {                                                                               \
    switch (dtype) {                                                                  \
      case ::ember::DType::Float32: { using scalar_t = float; return __VA_ARGS__(); }  \
      case ::ember::DType::Float64: { using scalar_t = double; return __VA_ARGS__(); } \
      default:                                                                        \
        throw ::ember::Error(::ember::str(opname, ": expected a floating dtype (float32 or float64), got ", dtype)); \
    }                                                                                 \
  }()

// The numeric dtypes (float32, float64, int64): a Bool tensor is refused with an error naming the op,
// so that kernels written for numbers (sums, scatters, random fills) never run on masks.
#define EMBER_DISPATCH_ALL(dtype, opname, ...)                                         \
  [&] {                                                                               \
    switch (dtype) {                                                                  \
      case ::ember::DType::Float32: { using scalar_t = float; return __VA_ARGS__(); }  \
      case ::ember::DType::Float64: { using scalar_t = double; return __VA_ARGS__(); } \
      case ::ember::DType::Int64: { using scalar_t = int64_t; return __VA_ARGS__(); }  \
      case ::ember::DType::Bool: break;                                               \
    }                                                                                 \
    throw ::ember::Error(::ember::str(opname, ": expected a numeric dtype (float32, float64 or int64), got ", dtype, \
                                      " (convert with .to(dtype))"));                 \
  }()

// Every dtype, Bool as C++ bool: for kernels that only move, compare or select elements.
#define EMBER_DISPATCH_ALL_AND_BOOL(dtype, opname, ...)                                \
  [&] {                                                                               \
    switch (dtype) {                                                                  \
      case ::ember::DType::Float32: { using scalar_t = float; return __VA_ARGS__(); }  \
      case ::ember::DType::Float64: { using scalar_t = double; return __VA_ARGS__(); } \
      case ::ember::DType::Int64: { using scalar_t = int64_t; return __VA_ARGS__(); }  \
      case ::ember::DType::Bool: { using scalar_t = bool; return __VA_ARGS__(); }      \
    }                                                                                 \
    throw ::ember::Error(::ember::str(opname, ": unknown dtype"));                    \
  }()

}  // namespace ember
