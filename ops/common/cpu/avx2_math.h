// Eight-lane float32 math for AVX2+FMA kernels, shared by the softmax family and the elementwise
// ops. Each function carries the target attribute itself, so that files compiled for the baseline
// ISA can call it from their own `target("avx2,fma")` functions once avx2_fma_available() says so.
//
// exp: range reduction x = n ln2 + r (|r| <= ln2 / 2, ln2 split in two parts so n ln2 is exact), a
// degree-6 Taylor polynomial for e^r, and 2^n built in the exponent bits. Relative error below
// 3e-7 (measured over the whole range in tests/ops/common/avx2_math_test.cpp); results below the
// smallest normal float flush to 0.
#pragma once
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define EMBER_HAVE_AVX2_MATH 1

namespace ember::cpu::avx2 {

inline bool avx2_fma_available() {
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
}

namespace detail {

// n = round(x log2 e) and e^r with r = x - n ln 2, for x already clamped to [-87.34, 88.73].
// Adding 1.5 * 2^23 rounds x log2 e to an integer held in the low mantissa bits, which is cheaper
// than a round instruction and hands over n as an integer too.
struct Reduced {
  __m256 poly;  // e^r
  __m256i n;
};
__attribute__((target("avx2,fma"))) inline Reduced reduce(__m256 xc) {
  const __m256 magic = _mm256_set1_ps(12582912.0f);
  const __m256 t = _mm256_fmadd_ps(xc, _mm256_set1_ps(1.44269504088896341f), magic);
  const __m256 n = _mm256_sub_ps(t, magic);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145751953125f), xc);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.428606765330187e-06f), r);
  __m256 p = _mm256_set1_ps(0.0013888889f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.008333334f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.041666668f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.16666667f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  return {p, _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_castps_si256(magic))};
}

__attribute__((target("avx2,fma"))) inline __m256 pow2(__m256i n) {  // 2^n for n in [-126, 127]
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23));
}

}  // namespace detail

// e^x for x <= 0 (valid up to 88), the softmax family's case (x minus the row's maximum): one
// clamp and one 2^n factor; below -87.33 flushes to 0.
__attribute__((target("avx2,fma"))) inline __m256 exp8_nonpositive(__m256 x) {
  const __m256 lo = _mm256_set1_ps(-87.33654f);
  const __m256 below = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
  const detail::Reduced e = detail::reduce(_mm256_max_ps(x, lo));
  return _mm256_andnot_ps(below, _mm256_mul_ps(e.poly, detail::pow2(e.n)));
}

// e^x for x in [-87.33, 88.72]: 2^n as two factors so that n = 128 stays a normal float; below
// flushes to 0, above is clamped (exp8_ieee adds inf and NaN). A NaN input gives an unspecified
// finite value.
__attribute__((target("avx2,fma"))) inline __m256 exp8(__m256 x) {
  const __m256 lo = _mm256_set1_ps(-87.33654f);
  const __m256 below = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
  const detail::Reduced e = detail::reduce(_mm256_min_ps(_mm256_max_ps(x, lo), _mm256_set1_ps(88.72283f)));
  const __m256i n1 = _mm256_srai_epi32(e.n, 1), n2 = _mm256_sub_epi32(e.n, n1);
  return _mm256_andnot_ps(below, _mm256_mul_ps(_mm256_mul_ps(e.poly, detail::pow2(n1)), detail::pow2(n2)));
}

// exp8 with IEEE edge cases: +inf above ln(FLT_MAX), NaN for NaN.
__attribute__((target("avx2,fma"))) inline __m256 exp8_ieee(__m256 x) {
  __m256 y = exp8(x);
  y = _mm256_blendv_ps(y, _mm256_set1_ps(__builtin_inff()), _mm256_cmp_ps(x, _mm256_set1_ps(88.72284f), _CMP_GT_OQ));
  return _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

// 1 / (1 + e^-x), exact division (no reciprocal estimate); 0 and 1 at the extremes, NaN for NaN.
__attribute__((target("avx2,fma"))) inline __m256 sigmoid8(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  return _mm256_div_ps(one, _mm256_add_ps(one, exp8_ieee(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}

// tanh: an odd Taylor polynomial (to x^11) for |x| < 0.3, where 1 - 2 / (e^2|x| + 1) would lose
// relative accuracy to cancellation, and that formula above it; the sign is copied back.
__attribute__((target("avx2,fma"))) inline __m256 tanh8(__m256 x) {
  const __m256 sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f);
  const __m256 a = _mm256_andnot_ps(sign, x);
  const __m256 big = _mm256_sub_ps(one, _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(exp8(_mm256_add_ps(a, a)), one)));
  const __m256 a2 = _mm256_mul_ps(a, a);
  __m256 p = _mm256_set1_ps(-0.0088632355f);  // -1382/155925
  p = _mm256_fmadd_ps(p, a2, _mm256_set1_ps(0.021869488f));   // 62/2835
  p = _mm256_fmadd_ps(p, a2, _mm256_set1_ps(-0.053968254f));  // -17/315
  p = _mm256_fmadd_ps(p, a2, _mm256_set1_ps(0.13333334f));    // 2/15
  p = _mm256_fmadd_ps(p, a2, _mm256_set1_ps(-0.33333334f));   // -1/3
  const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(p, a2), a, a);
  __m256 y = _mm256_blendv_ps(big, small, _mm256_cmp_ps(a, _mm256_set1_ps(0.3f), _CMP_LT_OQ));
  y = _mm256_or_ps(y, _mm256_and_ps(x, sign));
  return _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

// GPT-2's GELU, x/2 (1 + tanh u) with u = sqrt(2/pi) (x + 0.044715 x^3), written as
// x / (1 + e^(-2u)) (the same function), which does not cancel for negative x.
__attribute__((target("avx2,fma"))) inline __m256 gelu_tanh8(__m256 x) {
  const __m256 x3 = _mm256_mul_ps(_mm256_mul_ps(x, x), x);
  const __m256 u = _mm256_mul_ps(_mm256_set1_ps(0.7978845608f), _mm256_fmadd_ps(_mm256_set1_ps(0.044715f), x3, x));
  const __m256 e = exp8_ieee(_mm256_mul_ps(_mm256_set1_ps(-2.0f), u));
  const __m256 y = _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
  return _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

// erfc(z) for z >= 0 (NaN for NaN). Below 0.5, 1 - erf(z) with erf's Taylor series to z^13 (no
// cancellation: erfc >= 0.48 there). Above, erfc(z) = e^(-z^2) t Q(t) with t = 1 / (1 + z/2) and
// Q a degree-9 polynomial fitted to erfc(z) e^(z^2) / t over [0.5, 1e4] by iteratively reweighted
// least squares (relative error 1.4e-8 in float64; about 7e-7 once evaluated in float32); z^2 is
// carried as hi + lo (an FMA gives lo exactly) so that e^(-z^2) keeps its relative accuracy for
// large z. Past z = 9.3 erfc is below float's smallest normal and flushes to 0.
__attribute__((target("avx2,fma"))) inline __m256 erf_taylor8(__m256 z) {  // erf(z), accurate for |z| <= 0.5
  const __m256 z2 = _mm256_mul_ps(z, z);
  __m256 p = _mm256_set1_ps(-1.4925650e-05f);
  p = _mm256_fmadd_ps(p, z2, _mm256_set1_ps(1.2055333e-04f));
  p = _mm256_fmadd_ps(p, z2, _mm256_set1_ps(-8.5483270e-04f));
  p = _mm256_fmadd_ps(p, z2, _mm256_set1_ps(5.2239778e-03f));
  p = _mm256_fmadd_ps(p, z2, _mm256_set1_ps(-2.6866172e-02f));
  p = _mm256_fmadd_ps(p, z2, _mm256_set1_ps(1.1283792e-01f));
  p = _mm256_fmadd_ps(p, z2, _mm256_set1_ps(-3.7612638e-01f));
  p = _mm256_fmadd_ps(p, z2, _mm256_set1_ps(1.1283792e+00f));
  return _mm256_mul_ps(p, z);
}

__attribute__((target("avx2,fma"))) inline __m256 erfc8_nonnegative(__m256 z) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 t = _mm256_div_ps(one, _mm256_fmadd_ps(_mm256_set1_ps(0.5f), z, one));
  __m256 q = _mm256_set1_ps(-0.064407431f);
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(0.20878947f));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(-0.19166535f));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(-0.014569446f));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(-0.0086978450f));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(0.082894996f));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(0.17658480f));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(0.24680710f));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(0.28209561f));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(0.28209478f));
  const __m256 hi = _mm256_mul_ps(z, z), lo = _mm256_fmsub_ps(z, z, hi);  // z^2 = hi + lo exactly
  const __m256 e = _mm256_mul_ps(exp8_nonpositive(_mm256_sub_ps(_mm256_setzero_ps(), hi)), _mm256_sub_ps(one, lo));
  __m256 y = _mm256_mul_ps(_mm256_mul_ps(e, t), q);
  y = _mm256_blendv_ps(y, _mm256_sub_ps(one, erf_taylor8(z)), _mm256_cmp_ps(z, _mm256_set1_ps(0.5f), _CMP_LT_OQ));
  y = _mm256_andnot_ps(_mm256_cmp_ps(z, _mm256_set1_ps(9.5f), _CMP_GT_OQ), y);  // also keeps inf from making NaN
  return _mm256_blendv_ps(y, z, _mm256_cmp_ps(z, z, _CMP_UNORD_Q));
}

// erf(x): the Taylor series below 0.5 in magnitude (full relative accuracy near 0), 1 - erfc above;
// odd, NaN for NaN.
__attribute__((target("avx2,fma"))) inline __m256 erf8(__m256 x) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 a = _mm256_andnot_ps(sign, x);
  __m256 y = _mm256_sub_ps(_mm256_set1_ps(1.0f), erfc8_nonnegative(a));
  y = _mm256_blendv_ps(y, erf_taylor8(a), _mm256_cmp_ps(a, _mm256_set1_ps(0.5f), _CMP_LT_OQ));
  y = _mm256_or_ps(y, _mm256_and_ps(x, sign));
  return _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

// The exact GELU, x Phi(x) with Phi(x) = erfc(-x / sqrt 2) / 2, taken as erfc(|u|) / 2 or
// 1 - erfc(|u|) / 2 by the sign of u = -x / sqrt 2, so that the negative side (where GELU is tiny)
// keeps its relative accuracy instead of cancelling in 1 + erf.
__attribute__((target("avx2,fma"))) inline __m256 gelu8(__m256 x) {
  const __m256 half = _mm256_set1_ps(0.5f);
  const __m256 u = _mm256_mul_ps(x, _mm256_set1_ps(-0.70710678f));
  const __m256 e = _mm256_mul_ps(half, erfc8_nonnegative(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), u)));
  const __m256 phi = _mm256_blendv_ps(_mm256_sub_ps(_mm256_set1_ps(1.0f), e), e,
                                      _mm256_cmp_ps(u, _mm256_setzero_ps(), _CMP_GE_OQ));
  return _mm256_blendv_ps(_mm256_mul_ps(x, phi), x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

}  // namespace ember::cpu::avx2
#endif
