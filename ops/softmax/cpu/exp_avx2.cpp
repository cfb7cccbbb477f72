#include "ops/softmax/cpu/exp_avx2.h"

#include <cmath>
#include <limits>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define EMBER_X86 1
#endif

namespace ember::cpu {

#ifdef EMBER_X86
namespace {

__attribute__((target("avx2,fma"))) __m256 exp8(__m256 x) {
  const __m256 lo = _mm256_set1_ps(-87.33654f);
  __m256 below = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
  __m256 xc = _mm256_min_ps(_mm256_max_ps(x, lo), _mm256_set1_ps(88.0f));
  __m256 n = _mm256_round_ps(_mm256_mul_ps(xc, _mm256_set1_ps(1.44269504088896341f)),
                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145751953125f), xc);  // ln 2 in two parts
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.428606765330187e-06f), r);
  __m256 p = _mm256_set1_ps(0.0013888889f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.008333334f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.041666668f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.16666667f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  __m256 y = _mm256_mul_ps(p, _mm256_castsi256_ps(e));
  return _mm256_andnot_ps(below, y);  // exp(x) below -87.3 flushes to 0
}

// The row's maximum, or false when it holds a NaN or has no finite maximum.
__attribute__((target("avx2,fma"))) bool finite_max(const float* row, int64_t len, float& max) {
  int64_t k = 0;
  __m256 vmax = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  __m256 vnan = _mm256_setzero_ps();
  for (; k + 8 <= len; k += 8) {
    __m256 v = _mm256_loadu_ps(row + k);
    vnan = _mm256_or_ps(vnan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    vmax = _mm256_max_ps(vmax, v);
  }
  if (_mm256_movemask_ps(vnan)) return false;
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, vmax);
  float m = lanes[0];
  for (int i = 1; i < 8; ++i) m = lanes[i] > m ? lanes[i] : m;
  for (int64_t j = k; j < len; ++j) {
    if (row[j] != row[j]) return false;
    m = row[j] > m ? row[j] : m;
  }
  if (!(m > -std::numeric_limits<float>::infinity()) || m == std::numeric_limits<float>::infinity()) return false;
  max = m;
  return true;
}

__attribute__((target("avx2,fma"))) bool max_sum_avx2_impl(const float* row, int64_t len, float& max, double& sum) {
  float m;
  if (!finite_max(row, len, m)) return false;
  alignas(32) float lanes[8];
  int64_t k;
  __m256 vm = _mm256_set1_ps(m), acc = _mm256_setzero_ps();
  for (k = 0; k + 8 <= len; k += 8) acc = _mm256_add_ps(acc, exp8(_mm256_sub_ps(_mm256_loadu_ps(row + k), vm)));
  _mm256_store_ps(lanes, acc);
  double s = 0;
  for (int i = 0; i < 8; ++i) s += lanes[i];
  for (; k < len; ++k) s += std::exp(double(row[k]) - double(m));
  max = m;
  sum = s;
  return true;
}

__attribute__((target("avx2,fma"))) bool softmax_row_impl(const float* row, int64_t len, float* dst) {
  float m;
  if (!finite_max(row, len, m)) return false;
  __m256 vm = _mm256_set1_ps(m), acc = _mm256_setzero_ps();
  int64_t k = 0;
  for (; k + 8 <= len; k += 8) {
    __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(row + k), vm));
    _mm256_storeu_ps(dst + k, e);
    acc = _mm256_add_ps(acc, e);
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc);
  double s = 0;
  for (int i = 0; i < 8; ++i) s += lanes[i];
  for (int64_t j = k; j < len; ++j) s += dst[j] = std::exp(row[j] - m);
  __m256 inv = _mm256_set1_ps(float(1 / s));
  for (k = 0; k + 8 <= len; k += 8) _mm256_storeu_ps(dst + k, _mm256_mul_ps(_mm256_loadu_ps(dst + k), inv));
  for (; k < len; ++k) dst[k] *= float(1 / s);
  return true;
}

__attribute__((target("avx2,fma"))) void exp_scale_avx2_impl(const float* row, int64_t len, float shift, float scale,
                                                            float* dst) {
  __m256 vs = _mm256_set1_ps(shift), vc = _mm256_set1_ps(scale);
  int64_t k = 0;
  for (; k + 8 <= len; k += 8)
    _mm256_storeu_ps(dst + k, _mm256_mul_ps(exp8(_mm256_sub_ps(_mm256_loadu_ps(row + k), vs)), vc));
  for (; k < len; ++k) dst[k] = std::exp(row[k] - shift) * scale;
}

__attribute__((target("avx2,fma"))) float exp_one(float x) {
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, exp8(_mm256_set1_ps(x)));
  return lanes[0];
}

}  // namespace

bool have_avx2_fma() {
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
}
bool max_sum_exp_avx2(const float* row, int64_t len, float& max, double& sum) {
  return have_avx2_fma() && max_sum_avx2_impl(row, len, max, sum);
}
void exp_scale_avx2(const float* row, int64_t len, float shift, float scale, float* dst) {
  exp_scale_avx2_impl(row, len, shift, scale, dst);
}
bool softmax_row_avx2(const float* row, int64_t len, float* dst) {
  return have_avx2_fma() && softmax_row_impl(row, len, dst);
}
float exp_avx2_scalar_check(float x) { return exp_one(x); }
#else
bool have_avx2_fma() { return false; }
bool max_sum_exp_avx2(const float*, int64_t, float&, double&) { return false; }
bool softmax_row_avx2(const float*, int64_t, float*) { return false; }
void exp_scale_avx2(const float* row, int64_t len, float shift, float scale, float* dst) {
  for (int64_t k = 0; k < len; ++k) dst[k] = std::exp(row[k] - shift) * scale;
}
float exp_avx2_scalar_check(float x) { return std::exp(x); }
#endif

}  // namespace ember::cpu
