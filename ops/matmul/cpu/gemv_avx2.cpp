// AVX2+FMA matrix-vector kernels for float32, chosen at run time (gemv.cpp). A generation step is
// a chain of these, each streaming a weight matrix from DRAM once, so they are written for memory
// bandwidth: B is read as one sequential stream, several FMA chains run side by side (a
// one-accumulator dot product peaks near 16 GB/s here, well below the ~40 GB/s one core can read),
// and a software prefetch a few KiB ahead keeps enough cache-line requests in flight. Measured on
// this machine in NOTES.md ("GEMV for generation").
#include "ops/matmul/cpu/gemv_avx2.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

namespace ember::cpu {
namespace {

// How far ahead of the current load B is prefetched, in floats. Both directions read B as one
// long sequential stream; measured best between 1024 and 2048 (4 to 8 KiB).
constexpr int64_t kRowsPrefetch = 2048, kDotsPrefetch = 1024;

__attribute__((target("avx2,fma"))) float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

}  // namespace

__attribute__((target("avx2,fma"))) void gemv_rows_avx2(const float* a, int64_t a_stride, const float* b,
                                                         int64_t ldb, int64_t k, int64_t w, float* c) {
  // c[0, w) = sum_p a[p] * B[p, 0..w), one row of B at a time: c (a few KiB) stays in L1 while B
  // streams past once. Four independent 8-lane updates per step keep the FMA units busy.
  for (int64_t j = 0; j < w; ++j) c[j] = 0.0f;
  for (int64_t p = 0; p < k; ++p) {
    const float* r = b + p * ldb;
    const float s = a[p * a_stride];
    const __m256 av = _mm256_set1_ps(s);
    int64_t j = 0;
    for (; j + 32 <= w; j += 32) {
      _mm_prefetch(reinterpret_cast<const char*>(r + j + kRowsPrefetch), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(r + j + kRowsPrefetch + 16), _MM_HINT_T0);
      _mm256_storeu_ps(c + j, _mm256_fmadd_ps(av, _mm256_loadu_ps(r + j), _mm256_loadu_ps(c + j)));
      _mm256_storeu_ps(c + j + 8, _mm256_fmadd_ps(av, _mm256_loadu_ps(r + j + 8), _mm256_loadu_ps(c + j + 8)));
      _mm256_storeu_ps(c + j + 16, _mm256_fmadd_ps(av, _mm256_loadu_ps(r + j + 16), _mm256_loadu_ps(c + j + 16)));
      _mm256_storeu_ps(c + j + 24, _mm256_fmadd_ps(av, _mm256_loadu_ps(r + j + 24), _mm256_loadu_ps(c + j + 24)));
    }
    for (; j + 8 <= w; j += 8) _mm256_storeu_ps(c + j, _mm256_fmadd_ps(av, _mm256_loadu_ps(r + j), _mm256_loadu_ps(c + j)));
    for (; j < w; ++j) c[j] += s * r[j];
  }
}

__attribute__((target("avx2,fma"))) void gemv_dots_avx2(const float* a, const float* b, int64_t ldb, int64_t k,
                                                         int64_t n, float* c) {
  // c[j] = dot(a, B_j) for the rows B_j = b + j * ldb, one row at a time (so that B, whose rows
  // are usually adjacent, is one stream) with four accumulators; a stays in L1.
  for (int64_t j = 0; j < n; ++j) {
    const float* r = b + j * ldb;
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t p = 0;
    for (; p + 32 <= k; p += 32) {
      _mm_prefetch(reinterpret_cast<const char*>(r + p + kDotsPrefetch), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(r + p + kDotsPrefetch + 16), _MM_HINT_T0);
      s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + p), _mm256_loadu_ps(r + p), s0);
      s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + p + 8), _mm256_loadu_ps(r + p + 8), s1);
      s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + p + 16), _mm256_loadu_ps(r + p + 16), s2);
      s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + p + 24), _mm256_loadu_ps(r + p + 24), s3);
    }
    for (; p + 8 <= k; p += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + p), _mm256_loadu_ps(r + p), s0);
    float d = hsum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    for (; p < k; ++p) d += a[p] * r[p];
    c[j] = d;
  }
}

__attribute__((target("avx2,fma"))) void add_into_avx2(float* c, const float* x, int64_t n) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) _mm256_storeu_ps(c + j, _mm256_add_ps(_mm256_loadu_ps(c + j), _mm256_loadu_ps(x + j)));
  for (; j < n; ++j) c[j] += x[j];
}

}  // namespace ember::cpu
#endif
