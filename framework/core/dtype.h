// Element types and devices. Ember keeps the set small on purpose: float32 for models,
// float64 for references and gradcheck, int64 for indices and targets, bool for masks, and the two
// 16-bit storage formats bfloat16 and float16 (framework/core/half.h) for weights and activations.
//
// The halves store 2 bytes and compute in float32: a kernel widens on load and rounds once, to
// nearest even, on store. Float to half rounds to nearest even (float64 without double rounding);
// half to int64 refuses NaN, infinities and out-of-range values as float to int64 does. Each
// primitive declares the dtypes it accepts (Primitive::dtypes); an undeclared one is refused by
// name before the kernel runs.
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
#include "framework/core/half.h"

namespace ember {

enum class DType { Float32, Float64, Int64, Bool, BFloat16, Float16 };

inline size_t itemsize(DType t) {
  switch (t) {
    case DType::Float32: return 4;
    case DType::Bool: return 1;
    case DType::BFloat16:
    case DType::Float16: return 2;
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
    case DType::BFloat16: return "bfloat16";
    case DType::Float16: return "float16";
  }
  return "?";
}
inline bool is_floating(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::BFloat16 || t == DType::Float16;
}
inline bool is_half(DType t) { return t == DType::BFloat16 || t == DType::Float16; }
inline std::ostream& operator<<(std::ostream& os, DType t) { return os << name(t); }

template <class T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::Float32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::Float64; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::Int64; };
template <> struct dtype_of<bool> { static constexpr DType value = DType::Bool; };
template <> struct dtype_of<bfloat16> { static constexpr DType value = DType::BFloat16; };
template <> struct dtype_of<float16> { static constexpr DType value = DType::Float16; };
static_assert(sizeof(bool) == 1, "DType::Bool stores C++ bool, one byte per element");

enum class Device { CPU, CUDA };
inline const char* name(Device d) { return d == Device::CPU ? "cpu" : "cuda"; }
inline std::ostream& operator<<(std::ostream& os, Device d) { return os << name(d); }
Device parse_device(const std::string& s);  // "cpu" | "cuda", else ember::Error

// Calls f() with scalar_t the C++ type of `dtype`; kernels are written once for several types.
// Each macro names the dtypes it accepts; another dtype is an ember::Error naming the op, the dtype
// it got and the ones it accepts. The 16-bit types are host-only structs, so CUDA kernels use the
// first three macros, which never instantiate them.

// float32 and float64: the kernels that compute.
#define EMBER_DISPATCH_FLOAT(dtype, opname, ...)                                       \
  [&] {                                                                               \
    switch (dtype) {                                                                  \
      case ::ember::DType::Float32: { using scalar_t = float; return __VA_ARGS__(); }  \
      case ::ember::DType::Float64: { using scalar_t = double; return __VA_ARGS__(); } \
      default: break;                                                                 \
    }                                                                                 \
    throw ::ember::Error(::ember::str(opname, ": got ", dtype, ", accepts float32, float64", \
                                      " (convert with .to(dtype))"));                 \
  }()

// The numeric dtypes of the full-width kernels (float32, float64, int64): a Bool or 16-bit tensor is
// refused, so that kernels written for numbers (sums, scatters, random fills) never run on masks.
#define EMBER_DISPATCH_ALL(dtype, opname, ...)                                         \
  [&] {                                                                               \
    switch (dtype) {                                                                  \
      case ::ember::DType::Float32: { using scalar_t = float; return __VA_ARGS__(); }  \
      case ::ember::DType::Float64: { using scalar_t = double; return __VA_ARGS__(); } \
      case ::ember::DType::Int64: { using scalar_t = int64_t; return __VA_ARGS__(); }  \
      case ::ember::DType::Bool:                                                      \
      case ::ember::DType::BFloat16:                                                  \
      case ::ember::DType::Float16: break;                                            \
    }                                                                                 \
    throw ::ember::Error(::ember::str(opname, ": got ", dtype, ", accepts float32, float64, int64", \
                                      " (convert with .to(dtype))"));                 \
  }()

// float32, float64, int64 and Bool as C++ bool: kernels that move, compare or select elements and
// also run on CUDA.
#define EMBER_DISPATCH_ALL_AND_BOOL(dtype, opname, ...)                                \
  [&] {                                                                               \
    switch (dtype) {                                                                  \
      case ::ember::DType::Float32: { using scalar_t = float; return __VA_ARGS__(); }  \
      case ::ember::DType::Float64: { using scalar_t = double; return __VA_ARGS__(); } \
      case ::ember::DType::Int64: { using scalar_t = int64_t; return __VA_ARGS__(); }  \
      case ::ember::DType::Bool: { using scalar_t = bool; return __VA_ARGS__(); }      \
      case ::ember::DType::BFloat16:                                                  \
      case ::ember::DType::Float16: break;                                            \
    }                                                                                 \
    throw ::ember::Error(::ember::str(opname, ": got ", dtype, ", accepts float32, float64, int64, bool", \
                                      " (convert with .to(dtype))"));                 \
  }()

// Every dtype, the halves as ember::bfloat16 / ember::float16 (CPU only): kernels that only move,
// convert or compare elements.
#define EMBER_DISPATCH_EVERY(dtype, opname, ...)                                       \
  [&] {                                                                               \
    switch (dtype) {                                                                  \
      case ::ember::DType::Float32: { using scalar_t = float; return __VA_ARGS__(); }  \
      case ::ember::DType::Float64: { using scalar_t = double; return __VA_ARGS__(); } \
      case ::ember::DType::Int64: { using scalar_t = int64_t; return __VA_ARGS__(); }  \
      case ::ember::DType::Bool: { using scalar_t = bool; return __VA_ARGS__(); }      \
      case ::ember::DType::BFloat16: { using scalar_t = ::ember::bfloat16; return __VA_ARGS__(); } \
      case ::ember::DType::Float16: { using scalar_t = ::ember::float16; return __VA_ARGS__(); }   \
    }                                                                                 \
    throw ::ember::Error(::ember::str(opname, ": unknown dtype"));                    \
  }()

// The floating dtypes, halves included (CPU only): kernels that load through float and accumulate
// in float32 (or float64 for float64 inputs).
#define EMBER_DISPATCH_FLOAT_AND_HALF(dtype, opname, ...)                              \
  [&] {                                                                               \
    switch (dtype) {                                                                  \
      case ::ember::DType::Float32: { using scalar_t = float; return __VA_ARGS__(); }  \
      case ::ember::DType::Float64: { using scalar_t = double; return __VA_ARGS__(); } \
      case ::ember::DType::BFloat16: { using scalar_t = ::ember::bfloat16; return __VA_ARGS__(); } \
      case ::ember::DType::Float16: { using scalar_t = ::ember::float16; return __VA_ARGS__(); }   \
      default: break;                                                                 \
    }                                                                                 \
    throw ::ember::Error(::ember::str(opname, ": got ", dtype, ", accepts float32, float64, bfloat16, float16", \
                                      " (convert with .to(dtype))"));                 \
  }()

}  // namespace ember
