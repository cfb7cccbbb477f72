// Sixteen-lane float32 math for AVX-512F kernels: the same exp as avx2_math.h (see there for the
// method and its accuracy) at twice the width, which on CPUs with full-width 512-bit units (AMD
// Zen 5, Intel server cores) halves the cost of the softmax family's exponentials.
#pragma once
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define EMBER_HAVE_AVX512_MATH 1

namespace ember::cpu::avx512 {

inline bool avx512_available() {
  static const bool yes = __builtin_cpu_supports("avx512f");
  return yes;
}

// e^x for x <= 0 (valid up to 88); below -87.33 flushes to 0.
__attribute__((target("avx512f"))) inline __m512 exp16_nonpositive(__m512 x) {
  const __m512 lo = _mm512_set1_ps(-87.33654f);
  const __mmask16 keep = _mm512_cmp_ps_mask(x, lo, _CMP_GE_OQ);
  const __m512 xc = _mm512_max_ps(x, lo);
  const __m512 magic = _mm512_set1_ps(12582912.0f);  // 1.5 * 2^23: rounds to an integer in the low bits
  const __m512 t = _mm512_fmadd_ps(xc, _mm512_set1_ps(1.44269504088896341f), magic);
  const __m512 n = _mm512_sub_ps(t, magic);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145751953125f), xc);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.428606765330187e-06f), r);
  __m512 p = _mm512_set1_ps(0.0013888889f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.008333334f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.041666668f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.16666667f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  const __m512i pow2n = _mm512_slli_epi32(
      _mm512_add_epi32(_mm512_sub_epi32(_mm512_castps_si512(t), _mm512_castps_si512(magic)), _mm512_set1_epi32(127)), 23);
  return _mm512_maskz_mul_ps(keep, p, _mm512_castsi512_ps(pow2n));
}

}  // namespace ember::cpu::avx512
#endif
