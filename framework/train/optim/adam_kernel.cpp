#include "framework/train/optim/adam_kernel.h"

#include <cmath>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace ember::optim {

namespace {

template <class T>
void adam_scalar(T* p, const T* g, T* m, T* v, int64_t lo, int64_t hi, const AdamScalars<T>& s) {
  const T one = T(1);
  for (int64_t k = lo; k < hi; ++k) {
    T d = g[k] + s.l2 * p[k];
    m[k] = s.b1 * m[k] + (one - s.b1) * d;
    v[k] = s.b2 * v[k] + (one - s.b2) * d * d;
    p[k] = p[k] * s.shrink - s.step_size * m[k] / (std::sqrt(v[k]) * s.inv_sqrt_bc2 + s.eps);
  }
}

#if defined(__x86_64__)
// Returns how many leading elements it updated (a multiple of 8); the caller does the rest.
__attribute__((target("avx2"))) int64_t adam_avx2(float* p, const float* g, float* m, float* v, int64_t n,
                                                  const AdamScalars<float>& s) {
  const __m256 b1 = _mm256_set1_ps(s.b1), b2 = _mm256_set1_ps(s.b2), c1 = _mm256_set1_ps(1.0f - s.b1),
               c2 = _mm256_set1_ps(1.0f - s.b2), eps = _mm256_set1_ps(s.eps), ss = _mm256_set1_ps(s.step_size),
               ib = _mm256_set1_ps(s.inv_sqrt_bc2), l2 = _mm256_set1_ps(s.l2), sh = _mm256_set1_ps(s.shrink);
  int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    __m256 pk = _mm256_loadu_ps(p + k);
    __m256 d = _mm256_add_ps(_mm256_loadu_ps(g + k), _mm256_mul_ps(l2, pk));
    __m256 mk = _mm256_add_ps(_mm256_mul_ps(b1, _mm256_loadu_ps(m + k)), _mm256_mul_ps(c1, d));
    __m256 vk = _mm256_add_ps(_mm256_mul_ps(b2, _mm256_loadu_ps(v + k)), _mm256_mul_ps(_mm256_mul_ps(c2, d), d));
    __m256 den = _mm256_add_ps(_mm256_mul_ps(_mm256_sqrt_ps(vk), ib), eps);
    __m256 upd = _mm256_div_ps(_mm256_mul_ps(ss, mk), den);
    _mm256_storeu_ps(m + k, mk);
    _mm256_storeu_ps(v + k, vk);
    _mm256_storeu_ps(p + k, _mm256_sub_ps(_mm256_mul_ps(pk, sh), upd));
  }
  return k;
}

bool has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
#endif

}  // namespace

void adam_update(float* p, const float* g, float* m, float* v, int64_t n, const AdamScalars<float>& s, bool allow_simd) {
  int64_t done = 0;
#if defined(__x86_64__)
  if (allow_simd && has_avx2()) done = adam_avx2(p, g, m, v, n, s);
#endif
  adam_scalar(p, g, m, v, done, n, s);
}

void adam_update(double* p, const double* g, double* m, double* v, int64_t n, const AdamScalars<double>& s) {
  adam_scalar(p, g, m, v, 0, n, s);
}

}  // namespace ember::optim
