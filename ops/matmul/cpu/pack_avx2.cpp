#include "ops/matmul/cpu/pack_avx2.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

namespace ember::cpu {

__attribute__((target("avx2,fma"))) void pack_b_transposed_avx2(const float* b, int64_t b_cs, int64_t p0, int64_t kc,
                                                                int64_t j0, int64_t cols, int nr, float* dst) {
  int64_t j = 0;
  for (; j + 8 <= cols; j += 8) {
    const float* col[8];
    for (int i = 0; i < 8; ++i) col[i] = b + (j0 + j + i) * b_cs + p0;
    int64_t p = 0;
    for (; p + 8 <= kc; p += 8) {
      // r_i holds column j + i at rows p .. p+7; after the transpose, o_k holds row p + k at
      // columns j .. j+7: unpack pairs, then quadruples, then swap 128-bit halves.
      __m256 r0 = _mm256_loadu_ps(col[0] + p), r1 = _mm256_loadu_ps(col[1] + p);
      __m256 r2 = _mm256_loadu_ps(col[2] + p), r3 = _mm256_loadu_ps(col[3] + p);
      __m256 r4 = _mm256_loadu_ps(col[4] + p), r5 = _mm256_loadu_ps(col[5] + p);
      __m256 r6 = _mm256_loadu_ps(col[6] + p), r7 = _mm256_loadu_ps(col[7] + p);
      const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
      const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
      const __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
      const __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
      const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
      const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
      const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
      const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
      float* d = dst + p * nr + j;
      _mm256_storeu_ps(d + 0 * nr, _mm256_permute2f128_ps(s0, s4, 0x20));
      _mm256_storeu_ps(d + 1 * nr, _mm256_permute2f128_ps(s1, s5, 0x20));
      _mm256_storeu_ps(d + 2 * nr, _mm256_permute2f128_ps(s2, s6, 0x20));
      _mm256_storeu_ps(d + 3 * nr, _mm256_permute2f128_ps(s3, s7, 0x20));
      _mm256_storeu_ps(d + 4 * nr, _mm256_permute2f128_ps(s0, s4, 0x31));
      _mm256_storeu_ps(d + 5 * nr, _mm256_permute2f128_ps(s1, s5, 0x31));
      _mm256_storeu_ps(d + 6 * nr, _mm256_permute2f128_ps(s2, s6, 0x31));
      _mm256_storeu_ps(d + 7 * nr, _mm256_permute2f128_ps(s3, s7, 0x31));
    }
    for (; p < kc; ++p)
      for (int i = 0; i < 8; ++i) dst[p * nr + j + i] = col[i][p];
  }
  for (; j < cols; ++j) {
    const float* c = b + (j0 + j) * b_cs + p0;
    for (int64_t p = 0; p < kc; ++p) dst[p * nr + j] = c[p];
  }
}

}  // namespace ember::cpu
#endif
