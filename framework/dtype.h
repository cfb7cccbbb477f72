// Element types and devices. Ember keeps the set small on purpose: float32 for models,
// float64 for references and gradcheck, int64 for indices and targets.
#pragma once
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>

#include "framework/error.h"

namespace ember {

enum class DType { Float32, Float64, Int64 };

inline size_t itemsize(DType t) { return t == DType::Float32 ? 4 : 8; }
inline const char* name(DType t) {
  switch (t) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Int64: return "int64";
  }
  return "?";
}
inline bool is_floating(DType t) { return t != DType::Int64; }
inline std::ostream& operator<<(std::ostream& os, DType t) { return os << name(t); }

template <class T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::Float32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::Float64; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::Int64; };

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

#define EMBER_DISPATCH_ALL(dtype, opname, ...)                                         \
  [&] {                                                                               \
    switch (dtype) {                                                                  \
      case ::ember::DType::Float32: { using scalar_t = float; return __VA_ARGS__(); }  \
      case ::ember::DType::Float64: { using scalar_t = double; return __VA_ARGS__(); } \
      case ::ember::DType::Int64: { using scalar_t = int64_t; return __VA_ARGS__(); }  \
    }                                                                                 \
    throw ::ember::Error(::ember::str(opname, ": unknown dtype"));                    \
  }()

}  // namespace ember
