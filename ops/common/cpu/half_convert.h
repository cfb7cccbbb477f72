// Array conversions between float32 and the 16-bit floats, the loops every half-precision kernel
// and cast runs through. Each has a scalar path (framework/core/half.h, the reference) and a vector
// path chosen at run time: float16 with F16C's vcvtph2ps / vcvtps2ph, bfloat16 with AVX2 shifts
// (widening is a 16-bit shift; narrowing adds the round-to-nearest-even bias, NaN kept quiet). Both
// paths round identically; only NaN payloads may differ (a NaN stays a NaN of the same sign).
#pragma once
#include <cstdint>

#include "framework/core/half.h"

namespace ember::cpu {

enum class HalfPath { Auto, Scalar, Simd };

// What this CPU can run: bfloat16 needs AVX2, float16 AVX2 and F16C.
bool bf16_simd_available();
bool fp16_simd_available();

// out[i] = in[i] converted, for i in [0, n). Auto takes the vector path where the CPU has it;
// Simd on a CPU without it is an ember::Error (the tests ask for each path by name).
void bf16_to_float(const bfloat16* in, float* out, int64_t n, HalfPath path = HalfPath::Auto);
void float_to_bf16(const float* in, bfloat16* out, int64_t n, HalfPath path = HalfPath::Auto);
void fp16_to_float(const float16* in, float* out, int64_t n, HalfPath path = HalfPath::Auto);
void float_to_fp16(const float* in, float16* out, int64_t n, HalfPath path = HalfPath::Auto);

// The same for either 16-bit type, so that templated kernels convert rows with one call.
inline void to_float(const bfloat16* in, float* out, int64_t n) { bf16_to_float(in, out, n); }
inline void to_float(const float16* in, float* out, int64_t n) { fp16_to_float(in, out, n); }
inline void from_float(const float* in, bfloat16* out, int64_t n) { float_to_bf16(in, out, n); }
inline void from_float(const float* in, float16* out, int64_t n) { float_to_fp16(in, out, n); }

}  // namespace ember::cpu
