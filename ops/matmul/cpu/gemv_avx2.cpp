// AVX2+FMA matrix-vector kernels for float32, chosen at run time (gemv.cpp). A generation step is
// a chain of these, each streaming a weight matrix from DRAM once, so they are written for memory
// bandwidth: several FMA chains run side by side (a one-accumulator dot product was latency-
// bound), and both kernels read several rows of B at once (gemv_streams()), which keeps more
// cache-line requests in flight than one sequential stream does (the row kernel also loads and
// stores c once per group of rows). The measurements are in TUNING.md.
#include "ops/matmul/cpu/gemv_avx2.h"

#include "framework/core/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

namespace ember::cpu {
namespace {

// How far ahead of the current load the one-row dot products prefetch B, in floats; measured best
// between 1024 and 2048 (4 to 8 KiB) when every row went through them.
constexpr int64_t kDotsPrefetch = 1024;

// How far ahead along its row each stream of the row kernel prefetches B, in floats (2 KiB; past
// a row's end, the same stream's next row, where rows are contiguous): the hardware prefetchers
// alone left the row kernel behind MKL's sgemv, and 512 floats ahead did best (TUNING.md).
constexpr int64_t kRowsPrefetch = 512;

__attribute__((target("avx2,fma"))) float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// c[0, w) = sum_p a[p] * B[p, 0..w), kStreams rows of B per pass, k / kStreams rows apart: that
// many streams in different pages are in flight at once, and c (a few KiB, in L1) is loaded and
// stored once per group instead of once per row (eight adjacent rows did worse on narrow
// matrices: TUNING.md).
template <int kStreams>
__attribute__((target("avx2,fma"))) void rows_apart(const float* a, int64_t a_stride, const float* b, int64_t ldb,
                                                     int64_t k, int64_t w, float* c) {
  const int64_t span = k / kStreams;
  for (int64_t j = 0; j < w; ++j) c[j] = 0.0f;
  for (int64_t p = 0; p < span; ++p) {
    __m256 av[kStreams];
    const float* r[kStreams];
    for (int i = 0; i < kStreams; ++i) {
      av[i] = _mm256_set1_ps(a[(p + i * span) * a_stride]);
      r[i] = b + (p + i * span) * ldb;
    }
    int64_t j = 0;
    for (; j + 16 <= w; j += 16) {
      __m256 c0 = _mm256_loadu_ps(c + j), c1 = _mm256_loadu_ps(c + j + 8);
      for (int i = 0; i < kStreams; ++i) _mm_prefetch(reinterpret_cast<const char*>(r[i] + j + kRowsPrefetch), _MM_HINT_T0);
      for (int i = 0; i < kStreams; ++i) {
        c0 = _mm256_fmadd_ps(av[i], _mm256_loadu_ps(r[i] + j), c0);
        c1 = _mm256_fmadd_ps(av[i], _mm256_loadu_ps(r[i] + j + 8), c1);
      }
      _mm256_storeu_ps(c + j, c0);
      _mm256_storeu_ps(c + j + 8, c1);
    }
    for (; j < w; ++j) {
      float x = c[j];
      for (int i = 0; i < kStreams; ++i) x += a[(p + i * span) * a_stride] * r[i][j];
      c[j] = x;
    }
  }
  for (int64_t p = kStreams * span; p < k; ++p) {  // the last k mod kStreams rows, one at a time
    const float* r = b + p * ldb;
    const float s = a[p * a_stride];
    const __m256 av = _mm256_set1_ps(s);
    int64_t j = 0;
    for (; j + 8 <= w; j += 8) _mm256_storeu_ps(c + j, _mm256_fmadd_ps(av, _mm256_loadu_ps(r + j), _mm256_loadu_ps(c + j)));
    for (; j < w; ++j) c[j] += s * r[j];
  }
}

// c[i * c_rs + j] = dot(A_i, B_j) for the R rows A_i = a + i * a_rs and the rows B_j = b + j * ldb,
// one B_j at a time with four accumulators per row of A and a prefetch ahead (the tail of
// gemv_dots_avx2 and gemm_dots_avx2).
template <int R>
__attribute__((target("avx2,fma"))) void dots_one_by_one(const float* a, int64_t a_rs, const float* b, int64_t ldb,
                                                          int64_t k, int64_t n, float* c, int64_t c_rs) {
  for (int64_t j = 0; j < n; ++j) {
    const float* r = b + j * ldb;
    __m256 s[R][4];
    for (int i = 0; i < R; ++i)
      for (int q = 0; q < 4; ++q) s[i][q] = _mm256_setzero_ps();
    int64_t p = 0;
    for (; p + 32 <= k; p += 32) {
      _mm_prefetch(reinterpret_cast<const char*>(r + p + kDotsPrefetch), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(r + p + kDotsPrefetch + 16), _MM_HINT_T0);
      for (int q = 0; q < 4; ++q) {
        const __m256 bv = _mm256_loadu_ps(r + p + 8 * q);
        for (int i = 0; i < R; ++i) s[i][q] = _mm256_fmadd_ps(_mm256_loadu_ps(a + i * a_rs + p + 8 * q), bv, s[i][q]);
      }
    }
    for (; p + 8 <= k; p += 8) {
      const __m256 bv = _mm256_loadu_ps(r + p);
      for (int i = 0; i < R; ++i) s[i][0] = _mm256_fmadd_ps(_mm256_loadu_ps(a + i * a_rs + p), bv, s[i][0]);
    }
    for (int i = 0; i < R; ++i) {
      const float* ai = a + i * a_rs;
      float d = hsum(_mm256_add_ps(_mm256_add_ps(s[i][0], s[i][1]), _mm256_add_ps(s[i][2], s[i][3])));
      for (int64_t q = p; q < k; ++q) d += ai[q] * r[q];
      c[i * c_rs + j] = d;
    }
  }
}

// c[i * c_rs + j] = dot(A_i, B_j) as above, kStreams rows of B at a time, n / kStreams rows apart,
// so that as many streams in different pages are in flight at once; A's R rows stay in L1, and each
// pair of rows has its own accumulator, R * kStreams independent FMA chains, each B vector loaded
// once for all R rows.
template <int kStreams, int R>
__attribute__((target("avx2,fma"))) void dots_apart(const float* a, int64_t a_rs, const float* b, int64_t ldb,
                                                     int64_t k, int64_t n, float* c, int64_t c_rs) {
  const int64_t span = n / kStreams;
  for (int64_t j = 0; j < span; ++j) {
    const float* r[kStreams];
    __m256 s[R][kStreams];
    for (int q = 0; q < kStreams; ++q) r[q] = b + (j + q * span) * ldb;
    for (int i = 0; i < R; ++i)
      for (int q = 0; q < kStreams; ++q) s[i][q] = _mm256_setzero_ps();
    int64_t p = 0;
    for (; p + 8 <= k; p += 8) {
      __m256 av[R];
      for (int i = 0; i < R; ++i) av[i] = _mm256_loadu_ps(a + i * a_rs + p);
      for (int q = 0; q < kStreams; ++q) {
        const __m256 bv = _mm256_loadu_ps(r[q] + p);
        for (int i = 0; i < R; ++i) s[i][q] = _mm256_fmadd_ps(av[i], bv, s[i][q]);
      }
    }
    for (int i = 0; i < R; ++i) {
      const float* ai = a + i * a_rs;
      for (int q = 0; q < kStreams; ++q) {
        float d = hsum(s[i][q]);
        for (int64_t t = p; t < k; ++t) d += ai[t] * r[q][t];
        c[i * c_rs + j + q * span] = d;
      }
    }
  }
  dots_one_by_one<R>(a, a_rs, b + kStreams * span * ldb, ldb, k, n - kStreams * span, c + kStreams * span, c_rs);
}

}  // namespace

int gemv_streams() {
  // Four on AMD, eight elsewhere: the number that read a model's weights fastest on the Zen 4 and
  // on the Xeon it was measured on; AMD's other cores take the Zen 4's choice (TUNING.md).
  static const int streams = [] {
    __builtin_cpu_init();
    return __builtin_cpu_is("amd") ? 4 : 8;
  }();
  return streams;
}

void gemv_rows_avx2(const float* a, int64_t a_stride, const float* b, int64_t ldb, int64_t k, int64_t w, float* c,
                    int streams) {
  if (streams <= 4) rows_apart<4>(a, a_stride, b, ldb, k, w, c);
  else rows_apart<8>(a, a_stride, b, ldb, k, w, c);
}

void gemv_dots_avx2(const float* a, const float* b, int64_t ldb, int64_t k, int64_t n, float* c, int streams) {
  if (streams <= 4) dots_apart<4, 1>(a, 0, b, ldb, k, n, c, 0);
  else dots_apart<8, 1>(a, 0, b, ldb, k, n, c, 0);
}

void gemm_dots_avx2(const float* a, int64_t a_rs, int rows, const float* b, int64_t ldb, int64_t k, int64_t n,
                    float* c, int64_t c_rs) {
  switch (rows) {
    case 1: return dots_apart<4, 1>(a, a_rs, b, ldb, k, n, c, c_rs);
    case 2: return dots_apart<4, 2>(a, a_rs, b, ldb, k, n, c, c_rs);
    case 3: return dots_apart<4, 3>(a, a_rs, b, ldb, k, n, c, c_rs);
    default: EMBER_CHECK(false, "gemm_dots_avx2: 1 to 3 rows of A, got ", rows);
  }
}

__attribute__((target("avx2,fma"))) void add_into_avx2(float* c, const float* x, int64_t n) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) _mm256_storeu_ps(c + j, _mm256_add_ps(_mm256_loadu_ps(c + j), _mm256_loadu_ps(x + j)));
  for (; j < n; ++j) c[j] += x[j];
}

}  // namespace ember::cpu
#endif
