#include "ops/common/cpu/half_convert.h"

#include "framework/core/error.h"
#include "ops/common/cpu/cpu_has_f16c.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define EMBER_HALF_X86 1
#endif

namespace ember::cpu {

namespace {

void bf16_to_float_scalar(const bfloat16* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = bf16_bits_to_float(in[i].bits);
}
void float_to_bf16_scalar(const float* in, bfloat16* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i].bits = float_to_bf16_bits(in[i]);
}
void fp16_to_float_scalar(const float16* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = fp16_bits_to_float(in[i].bits);
}
void float_to_fp16_scalar(const float* in, float16* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i].bits = float_to_fp16_bits(in[i]);
}

#ifdef EMBER_HALF_X86
// Eight at a time; the tail (under 8) goes through the scalar reference, which rounds the same way.
__attribute__((target("avx2"))) void bf16_to_float_avx2(const bfloat16* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i)));
    _mm256_storeu_ps(out + i, _mm256_castsi256_ps(_mm256_slli_epi32(w, 16)));
  }
  bf16_to_float_scalar(in + i, out + i, n - i);
}

__attribute__((target("avx2"))) void float_to_bf16_avx2(const float* in, bfloat16* out, int64_t n) {
  const __m256i one = _mm256_set1_epi32(1), bias = _mm256_set1_epi32(0x7fff), quiet = _mm256_set1_epi32(0x40);
  const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i u = _mm256_castps_si256(_mm256_loadu_ps(in + i));
    __m256i hi = _mm256_srli_epi32(u, 16);
    // Round to nearest even: add 0x7fff plus the lowest kept bit, then drop the low half.
    __m256i r = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(bias, _mm256_and_si256(hi, one))), 16);
    __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs_mask), inf);
    r = _mm256_blendv_epi8(r, _mm256_or_si256(hi, quiet), nan);
    // Each 32-bit lane holds a value below 2^16: pack to 16 bits, then gather the two 64-bit halves.
    __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_castsi256_si128(packed));
  }
  float_to_bf16_scalar(in + i, out + i, n - i);
}

__attribute__((target("avx2,f16c"))) void fp16_to_float_f16c(const float16* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  fp16_to_float_scalar(in + i, out + i, n - i);
}

__attribute__((target("avx2,f16c"))) void float_to_fp16_f16c(const float* in, float16* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  float_to_fp16_scalar(in + i, out + i, n - i);
}
#endif

bool use_simd(HalfPath path, bool available, const char* what, const char* needs) {
  if (path == HalfPath::Scalar) return false;
  if (path == HalfPath::Simd) EMBER_CHECK(available, what, ": the vector path needs ", needs, ", which this CPU lacks");
  return available;
}

}  // namespace

bool bf16_simd_available() {
#ifdef EMBER_HALF_X86
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
#else
  return false;
#endif
}

bool fp16_simd_available() {
#ifdef EMBER_HALF_X86
  static const bool yes = __builtin_cpu_supports("avx2") && ember::cpu::cpu_has_f16c();
  return yes;
#else
  return false;
#endif
}

void bf16_to_float(const bfloat16* in, float* out, int64_t n, HalfPath path) {
#ifdef EMBER_HALF_X86
  if (use_simd(path, bf16_simd_available(), "bf16_to_float", "AVX2")) return bf16_to_float_avx2(in, out, n);
#else
  use_simd(path, false, "bf16_to_float", "AVX2");
#endif
  bf16_to_float_scalar(in, out, n);
}

void float_to_bf16(const float* in, bfloat16* out, int64_t n, HalfPath path) {
#ifdef EMBER_HALF_X86
  if (use_simd(path, bf16_simd_available(), "float_to_bf16", "AVX2")) return float_to_bf16_avx2(in, out, n);
#else
  use_simd(path, false, "float_to_bf16", "AVX2");
#endif
  float_to_bf16_scalar(in, out, n);
}

void fp16_to_float(const float16* in, float* out, int64_t n, HalfPath path) {
#ifdef EMBER_HALF_X86
  if (use_simd(path, fp16_simd_available(), "fp16_to_float", "AVX2 and F16C")) return fp16_to_float_f16c(in, out, n);
#else
  use_simd(path, false, "fp16_to_float", "AVX2 and F16C");
#endif
  fp16_to_float_scalar(in, out, n);
}

void float_to_fp16(const float* in, float16* out, int64_t n, HalfPath path) {
#ifdef EMBER_HALF_X86
  if (use_simd(path, fp16_simd_available(), "float_to_fp16", "AVX2 and F16C")) return float_to_fp16_f16c(in, out, n);
#else
  use_simd(path, false, "float_to_fp16", "AVX2 and F16C");
#endif
  float_to_fp16_scalar(in, out, n);
}

}  // namespace ember::cpu
