#include "ops/matmul/cpu/pack_avx2.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include <algorithm>

namespace ember::cpu {

namespace {
// Transposes the 8 x 8 block x[i][k] in registers: unpack pairs, then quadruples, then swap
// 128-bit halves.
__attribute__((target("avx2,fma"), always_inline)) inline void transpose8(__m256 x[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(x[0], x[1]), t1 = _mm256_unpackhi_ps(x[0], x[1]);
  const __m256 t2 = _mm256_unpacklo_ps(x[2], x[3]), t3 = _mm256_unpackhi_ps(x[2], x[3]);
  const __m256 t4 = _mm256_unpacklo_ps(x[4], x[5]), t5 = _mm256_unpackhi_ps(x[4], x[5]);
  const __m256 t6 = _mm256_unpacklo_ps(x[6], x[7]), t7 = _mm256_unpackhi_ps(x[6], x[7]);
  const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  x[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
  x[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
  x[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
  x[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
  x[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
  x[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
  x[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
  x[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}
}  // namespace

__attribute__((target("avx2,fma"))) void pack_a_rows_avx2(const float* a, int64_t lda, int64_t rows, int64_t kc, int mr,
                                                          float* dst) {
  // Columns p .. p+7 of the (up to 8) rows are transposed in registers; column p + k goes to
  // dst + (p + k) * mr as 8 floats, of which the last 8 - mr spill into column p + k + 1 and are
  // overwritten by its own store, except for the very last column (a masked store).
  alignas(32) static const int32_t lanes[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  const __m256i keep = _mm256_cmpgt_epi32(_mm256_set1_epi32(mr), _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes)));
  int64_t p = 0;
  for (; p + 8 <= kc; p += 8) {
    __m256 x[8];
    for (int i = 0; i < 8; ++i) x[i] = i < rows ? _mm256_loadu_ps(a + i * lda + p) : _mm256_setzero_ps();
    transpose8(x);
    for (int k = 0; k < 8; ++k) {
      float* d = dst + (p + k) * mr;
      if (p + k + 1 < kc) _mm256_storeu_ps(d, x[k]);
      else _mm256_maskstore_ps(d, keep, x[k]);
    }
  }
  for (; p < kc; ++p)
    for (int i = 0; i < mr; ++i) dst[p * mr + i] = i < rows ? a[i * lda + p] : 0.0f;
}

__attribute__((target("avx2,fma"))) void pack_a_cols_avx2(const float* a, int64_t lda, int64_t rows, int64_t kc, int mr,
                                                          float* dst) {
  // Column p of the sliver is `rows` contiguous floats: one masked load (lanes past `rows` read as
  // 0 and are never touched), one 8-float store whose spill past mr the next column overwrites,
  // and a masked store for the last column.
  alignas(32) static const int32_t lanes[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  const __m256i idx = _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes));
  const __m256i have = _mm256_cmpgt_epi32(_mm256_set1_epi32(int(std::min<int64_t>(rows, mr))), idx);
  const __m256i keep = _mm256_cmpgt_epi32(_mm256_set1_epi32(mr), idx);
  for (int64_t p = 0; p < kc; ++p) {
    const __m256 x = _mm256_maskload_ps(a + p * lda, have);
    if (p + 1 < kc) _mm256_storeu_ps(dst + p * mr, x);
    else _mm256_maskstore_ps(dst + p * mr, keep, x);
  }
}

__attribute__((target("avx2,fma"))) void pack_b_transposed_avx2(const float* b, int64_t b_cs, int64_t p0, int64_t kc,
                                                                int64_t j0, int64_t cols, int nr, float* dst) {
  // Eight rows of the sliver at a time, all its columns before the next eight: each row of dst is
  // then written whole and once (with the columns outer, each 64-byte line of a sliver wider than
  // L1 is fetched back for every 8 columns it holds), and the source is read as `cols` short runs
  // that stay in L1 between the two halves of each line (TUNING.md).
  const int64_t full = cols / 8 * 8;
  int64_t p = 0;
  for (; p + 8 <= kc; p += 8)
    for (int64_t j = 0; j < full; j += 8) {
      const float* src = b + (j0 + j) * b_cs + p0 + p;
      __m256 x[8];
      for (int i = 0; i < 8; ++i) x[i] = _mm256_loadu_ps(src + i * b_cs);
      transpose8(x);  // x[k] now holds row p + k at columns j .. j+7
      float* d = dst + p * nr + j;
      for (int k = 0; k < 8; ++k) _mm256_storeu_ps(d + k * nr, x[k]);
    }
  for (; p < kc; ++p)
    for (int64_t j = 0; j < full; ++j) dst[p * nr + j] = b[(j0 + j) * b_cs + p0 + p];
  for (int64_t j = full; j < cols; ++j) {
    const float* c = b + (j0 + j) * b_cs + p0;
    for (int64_t q = 0; q < kc; ++q) dst[q * nr + j] = c[q];
  }
}

}  // namespace ember::cpu
#endif
