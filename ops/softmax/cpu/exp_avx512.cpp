// The softmax family's row kernels with AVX-512F, sixteen lanes at a time (exp_simd.h); the same
// passes as exp_avx2.cpp, with masked loads and stores for the tails only: a masked store in the
// main loop made exp_scale three times slower than AVX2 on Zen 5 (NOTES.md).
#include <cmath>
#include <limits>

// GCC 12 reports the "undefined" passthrough operands inside its own AVX-512 intrinsics
// (_mm512_max_ps, _mm512_reduce_max_ps) as uninitialised; they are not.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "ops/common/cpu/avx512_math.h"
#include "ops/softmax/cpu/exp_simd.h"

namespace ember::cpu {

#ifdef EMBER_HAVE_AVX512_MATH
namespace {

using avx512::exp16_nonpositive;

__attribute__((target("avx512f"))) inline __mmask16 tail_mask(int64_t left) {
  return left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1);
}

// The row's maximum, or false when it holds a NaN or has no finite maximum.
__attribute__((target("avx512f"))) bool finite_max(const float* row, int64_t len, float& max) {
  const __m512 neg_inf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  __m512 vmax = neg_inf;
  __mmask16 nan = 0;
  for (int64_t k = 0; k < len; k += 16) {
    const __mmask16 m = tail_mask(len - k);
    const __m512 v = _mm512_mask_loadu_ps(neg_inf, m, row + k);
    nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    vmax = _mm512_max_ps(vmax, v);
  }
  if (nan) return false;
  const float mx = _mm512_reduce_max_ps(vmax);
  if (!(mx > -std::numeric_limits<float>::infinity()) || mx == std::numeric_limits<float>::infinity()) return false;
  max = mx;
  return true;
}

// Lanes summed in double, as the scalar path sums.
__attribute__((target("avx512f"))) double lane_sum(__m512 acc) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, acc);
  double s = 0;
  for (float v : lanes) s += v;
  return s;
}

__attribute__((target("avx512f"))) bool max_sum_impl(const float* row, int64_t len, float& max, double& sum) {
  float m;
  if (!finite_max(row, len, m)) return false;
  const __m512 vm = _mm512_set1_ps(m);
  __m512 acc = _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + 16 <= len; k += 16) acc = _mm512_add_ps(acc, exp16_nonpositive(_mm512_sub_ps(_mm512_loadu_ps(row + k), vm)));
  if (k < len) {
    const __mmask16 t = tail_mask(len - k);
    acc = _mm512_mask_add_ps(acc, t, acc, exp16_nonpositive(_mm512_sub_ps(_mm512_maskz_loadu_ps(t, row + k), vm)));
  }
  max = m;
  sum = lane_sum(acc);
  return true;
}

__attribute__((target("avx512f"))) bool softmax_row_impl(const float* row, int64_t len, float* dst) {
  float m;
  if (!finite_max(row, len, m)) return false;
  const __m512 vm = _mm512_set1_ps(m);
  __m512 acc = _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + 16 <= len; k += 16) {
    const __m512 e = exp16_nonpositive(_mm512_sub_ps(_mm512_loadu_ps(row + k), vm));
    _mm512_storeu_ps(dst + k, e);
    acc = _mm512_add_ps(acc, e);
  }
  const __mmask16 t = tail_mask(len - k);
  if (k < len) {
    const __m512 e = exp16_nonpositive(_mm512_sub_ps(_mm512_maskz_loadu_ps(t, row + k), vm));
    _mm512_mask_storeu_ps(dst + k, t, e);
    acc = _mm512_mask_add_ps(acc, t, acc, e);
  }
  const __m512 inv = _mm512_set1_ps(float(1 / lane_sum(acc)));
  for (k = 0; k + 16 <= len; k += 16) _mm512_storeu_ps(dst + k, _mm512_mul_ps(_mm512_loadu_ps(dst + k), inv));
  if (k < len) _mm512_mask_storeu_ps(dst + k, t, _mm512_mul_ps(_mm512_maskz_loadu_ps(t, dst + k), inv));
  return true;
}

__attribute__((target("avx512f"))) void exp_scale_impl(const float* row, int64_t len, float shift, float scale, float* dst) {
  const __m512 vs = _mm512_set1_ps(shift), vc = _mm512_set1_ps(scale);
  int64_t k = 0;
  for (; k + 16 <= len; k += 16)
    _mm512_storeu_ps(dst + k, _mm512_mul_ps(exp16_nonpositive(_mm512_sub_ps(_mm512_loadu_ps(row + k), vs)), vc));
  if (k < len) {
    const __mmask16 t = tail_mask(len - k);
    _mm512_mask_storeu_ps(dst + k, t, _mm512_mul_ps(exp16_nonpositive(_mm512_sub_ps(_mm512_maskz_loadu_ps(t, row + k), vs)), vc));
  }
}

__attribute__((target("avx512f"))) float exp_one_impl(float x) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, exp16_nonpositive(_mm512_set1_ps(x)));
  return lanes[0];
}

}  // namespace

namespace rows_avx512 {
bool max_sum(const float* row, int64_t len, float& max, double& sum) { return max_sum_impl(row, len, max, sum); }
bool softmax_row(const float* row, int64_t len, float* dst) { return softmax_row_impl(row, len, dst); }
void exp_scale(const float* row, int64_t len, float shift, float scale, float* dst) {
  exp_scale_impl(row, len, shift, scale, dst);
}
float exp_one(float x) { return exp_one_impl(x); }
}  // namespace rows_avx512
#endif

}  // namespace ember::cpu
