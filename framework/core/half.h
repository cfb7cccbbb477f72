// The two 16-bit floating formats, as storage: bfloat16 (float32's 8-bit exponent, 7 stored
// mantissa bits) and IEEE float16 (5-bit exponent, 10 mantissa bits). Arithmetic happens in float32:
// a value is widened on load and rounded once, to nearest even, on store. These scalar conversions
// are the reference that every vectorised path (F16C, AVX-512 BF16, CUDA) is tested against.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace ember {

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// bfloat16 is float32's top half, so widening is a shift; narrowing rounds the dropped 16 bits to
// nearest even. NaN stays NaN (a quiet one, with the sign kept) instead of rounding into infinity.
inline uint16_t float_to_bf16_bits(float f) {
  uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x0040u);
  uint32_t round = 0x7fffu + ((u >> 16) & 1u);
  return uint16_t((u + round) >> 16);
}
inline float bf16_bits_to_float(uint16_t h) { return bits_float(uint32_t(h) << 16); }

// float16: normals rebias the exponent (127 -> 15); magnitudes from 65520 up round to infinity;
// below 2^-14 the result is subnormal, a multiple of 2^-24.
inline uint16_t float_to_fp16_bits(float f) {
  uint32_t x = float_bits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) return uint16_t(sign | (x > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (x >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // 65520 and up: past the largest, 65504
  if (x < 0x38800000u) {                                  // subnormal or zero
    uint32_t e = x >> 23;
    if (e < 102) return uint16_t(sign);  // below 2^-25: rounds to zero
    uint32_t m = (x & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - e;  // 14..24: the value in units of 2^-24 is m >> shift
    uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1u))) ++q;  // may carry into the smallest normal
    return uint16_t(sign | q);
  }
  uint32_t h = (((x >> 23) - 112) << 10) | ((x & 0x7fffffu) >> 13);
  uint32_t rem = x & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // a carry into the exponent is right
  return uint16_t(sign | h);
}
inline float fp16_bits_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {  // zero or subnormal: m * 2^-24, exact in float32
    float v = float(m) * 5.9604644775390625e-8f;
    return bits_float(float_bits(v) | sign);
  }
  if (e == 31) return bits_float(sign | 0x7f800000u | (m << 13));
  return bits_float(sign | ((e + 112) << 23) | (m << 13));
}

// Element types for tensors of these dtypes: two bytes, converting to and from float. Kernels load
// through float(x) and store through T(value); nothing computes in 16 bits.
struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  explicit bfloat16(float f) : bits(float_to_bf16_bits(f)) {}
  explicit bfloat16(double d) : bits(float_to_bf16_bits(float(d))) {}
  operator float() const { return bf16_bits_to_float(bits); }
  static bfloat16 from_bits(uint16_t b) {
    bfloat16 r;
    r.bits = b;
    return r;
  }
};
struct float16 {
  uint16_t bits = 0;
  float16() = default;
  explicit float16(float f) : bits(float_to_fp16_bits(f)) {}
  explicit float16(double d) : bits(float_to_fp16_bits(float(d))) {}
  operator float() const { return fp16_bits_to_float(bits); }
  static float16 from_bits(uint16_t b) {
    float16 r;
    r.bits = b;
    return r;
  }
};
// A double rounded to float32 toward zero with the lowest bit set when inexact ("round to odd"):
// rounding that float once more to 16 bits gives the correctly rounded half of the double, where
// plain float(v) rounds twice and can miss a tie (float64 and int64 to half go through it).
inline float float_for_half(double v) {
  float f = float(v);
  if (std::isnan(v) || double(f) == v) return f;
  if (std::isinf(f)) return std::copysign(std::numeric_limits<float>::max(), f);  // max's last bit is 1
  if (std::fabs(double(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);
  return bits_float(float_bits(f) | 1u);
}

static_assert(sizeof(bfloat16) == 2 && sizeof(float16) == 2, "16-bit storage types");

}  // namespace ember
