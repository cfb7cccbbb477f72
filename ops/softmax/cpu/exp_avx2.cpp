// The softmax family's row kernels with AVX2+FMA, eight lanes at a time (exp_simd.h).
#include "ops/softmax/cpu/exp_simd.h"

#include <cmath>
#include <limits>

#include "ops/common/cpu/avx2_math.h"

namespace ember::cpu {

#ifdef EMBER_HAVE_AVX2_MATH
namespace {

// Every exponent below is x minus its row's maximum, never positive: exp8_nonpositive serves.

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
  for (k = 0; k + 8 <= len; k += 8) acc = _mm256_add_ps(acc, avx2::exp8_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(row + k), vm)));
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
    __m256 e = avx2::exp8_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(row + k), vm));
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
    _mm256_storeu_ps(dst + k, _mm256_mul_ps(avx2::exp8_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(row + k), vs)), vc));
  for (; k < len; ++k) dst[k] = std::exp(row[k] - shift) * scale;
}

__attribute__((target("avx2,fma"))) float exp_one_impl(float x) {
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, avx2::exp8_nonpositive(_mm256_set1_ps(x)));
  return lanes[0];
}

}  // namespace

namespace rows_avx2 {
bool max_sum(const float* row, int64_t len, float& max, double& sum) { return max_sum_avx2_impl(row, len, max, sum); }
bool softmax_row(const float* row, int64_t len, float* dst) { return softmax_row_impl(row, len, dst); }
void exp_scale(const float* row, int64_t len, float shift, float scale, float* dst) {
  exp_scale_avx2_impl(row, len, shift, scale, dst);
}
float exp_one(float x) { return exp_one_impl(x); }
}  // namespace rows_avx2
#endif

}  // namespace ember::cpu
