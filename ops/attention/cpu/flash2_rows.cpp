// Vector versions of the FlashAttention-2 row operations (see flash2_rows.h), written once with
// GCC vector extensions and instantiated per instruction set as in ops/matmul/cpu/microkernels.cpp.
// exp is the polynomial of tile_math.h's exp_shifted<float> on whole vectors; its argument is
// clamped below at -100 first (exp underflows to 0 there anyway), which keeps the integer
// conversion of x / ln 2 in range for any finite or -inf input. AVX-512 scales by 2^k with
// vscalefps instead (vexp<16>).
#include "ops/attention/cpu/flash2_rows.h"

#include <algorithm>
#include <cmath>
#include <limits>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "ops/attention/attention_math.h"
#include "ops/matmul/cpu/kernels.h"

namespace ember::cpu::attn {
namespace {

template <int W>
struct FV {
  typedef float v __attribute__((vector_size(W * 4), aligned(4), may_alias));
  typedef int32_t vi __attribute__((vector_size(W * 4), aligned(4), may_alias));
};

#if defined(__x86_64__) || defined(__i386__)
// AVX-512 has the last step as one instruction: vscalefps computes p * 2^k from k as a float, so
// the integer conversion, the exponent arithmetic and the multiply of the generic version go, and
// with zero-masking below -87.34 (x / ln 2 = -126, where float's normal range ends) so does the
// clamp: 13 vector operations instead of 18, and no result is subnormal. A plain function, not a
// specialisation of vexp: clang would give it vexp's always_inline, and then refuse to inline a
// function with a target into the (target-less) row templates. The AVX-512 wrappers below are
// `flatten`, which inlines it there.
__attribute__((target("avx512f"))) inline void vexp_avx512(FV<16>::v& x) {
  const __m512 v = (__m512)x;
  const __mmask16 normal = _mm512_cmp_ps_mask(v, _mm512_set1_ps(-87.33654f), _CMP_NLT_UQ);  // also NaN
  const __m512 magic = _mm512_set1_ps(12582912.0f);  // 1.5 * 2^23: adding it rounds to an integer
  const __m512 kf = _mm512_sub_ps(_mm512_fmadd_ps(v, _mm512_set1_ps(1.44269504088896341f), magic), magic);
  __m512 r = _mm512_fnmadd_ps(kf, _mm512_set1_ps(0.693145751953125f), v);
  r = _mm512_fnmadd_ps(kf, _mm512_set1_ps(1.42860682030941723e-6f), r);
  __m512 p = _mm512_set1_ps(1.0f / 720);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  x = (FV<16>::v)_mm512_maskz_scalef_ps(normal, p, kf);
}
#endif

// x = exp(x) in place (by reference: a vector passed by value would change the ABI with the ISA).
template <int W>
__attribute__((always_inline)) inline void vexp(typename FV<W>::v& x) {
  using V = typename FV<W>::v;
#if defined(__x86_64__) || defined(__i386__)
  if constexpr (W == 16) {
    vexp_avx512(x);
    return;
  }
#endif
  using VI = typename FV<W>::vi;
  const V lo = V{} - 100.0f;
  x = x < lo ? lo : x;  // NaN compares false and stays NaN
  const V kf = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const V r = (x - kf * 0.693145751953125f) - kf * 1.42860682030941723e-6f;
  const V p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720))))));
  const VI k = __builtin_convertvector(kf, VI);
  const VI bits = ((k + 127) << 23) & (k >= -126);
  x = p * (V)bits;
}

// The forward's online softmax on one block of S^T for nr queries (see flash2_rows.h), W queries
// at a time: every reduction runs down a column, across key rows, so the running max and sum of
// W queries stay in one vector each and no horizontal reduction is needed.
// How far a block's largest score may exceed a query's running max before the max moves (ln 256).
constexpr float kLazyMax = 5.545177444479562f;

template <int W>
__attribute__((always_inline)) inline bool softmax_cols_body(float* s, int64_t rows, int64_t nr, const int32_t* lim,
                                                             float* m, float* l, float* alpha) {
  using V = typename FV<W>::v;
  using VI = typename FV<W>::vi;
  const V ninf = V{} - std::numeric_limits<float>::infinity();
  VI moved = {};  // lanes whose max moved in some column group
  for (int64_t c = 0; c < nr; c += W) {
    float* col = s + c;
    // Four partial maxima and sums, rows r, r+1, r+2, r+3: one chain of dependent max (or add)
    // instructions down a 128-row block waits 4 cycles a row, longer than the exp between them.
    V vm4[4] = {ninf, ninf, ninf, ninf};
    if (lim) {  // a block on the causal diagonal: rows past a query's last visible key become -inf
      const VI lv = *reinterpret_cast<const VI*>(lim + c);
      for (int64_t r = 0; r < rows; ++r) {
        V* p = reinterpret_cast<V*>(col + r * nr);
        const V x = (VI{} + int32_t(r)) < lv ? *p : ninf;
        *p = x;
        vm4[r & 3] = vm4[r & 3] > x ? vm4[r & 3] : x;
      }
    } else {
      int64_t r = 0;
      for (; r + 4 <= rows; r += 4)
        for (int u = 0; u < 4; ++u) {
          const V x = *reinterpret_cast<const V*>(col + (r + u) * nr);
          vm4[u] = vm4[u] > x ? vm4[u] : x;
        }
      for (; r < rows; ++r) {
        const V x = *reinterpret_cast<const V*>(col + r * nr);
        vm4[0] = vm4[0] > x ? vm4[0] : x;
      }
    }
    const V vm01 = vm4[0] > vm4[1] ? vm4[0] : vm4[1], vm23 = vm4[2] > vm4[3] ? vm4[2] : vm4[3];
    const V vm = vm01 > vm23 ? vm01 : vm23;
    const V m_old = *reinterpret_cast<const V*>(m + c);
    // Lazy: the max moves only by more than kLazyMax (from -inf, to any finite block max).
    const VI move = vm > m_old + kLazyMax;
    const V m_new = move ? vm : m_old;
    moved |= move;
    // A query that has seen no key yet keeps m = -inf; shifting by 0 then gives exp(-inf) = 0.
    const V shift = m_new == ninf ? V{} : m_new;
    V sum4[4] = {};
    int64_t r = 0;
    for (; r + 4 <= rows; r += 4)
      for (int u = 0; u < 4; ++u) {
        V* p = reinterpret_cast<V*>(col + (r + u) * nr);
        V e = *p - shift;
        vexp<W>(e);
        *p = e;
        sum4[u] += e;
      }
    for (; r < rows; ++r) {
      V* p = reinterpret_cast<V*>(col + r * nr);
      V e = *p - shift;
      vexp<W>(e);
      *p = e;
      sum4[0] += e;
    }
    const V sum = (sum4[0] + sum4[1]) + (sum4[2] + sum4[3]);
    V a = m_old - shift;  // -inf on a query's first visible block: alpha = 0
    vexp<W>(a);
    *reinterpret_cast<V*>(alpha + c) = a;
    *reinterpret_cast<V*>(l + c) = a * *reinterpret_cast<const V*>(l + c) + sum;
    *reinterpret_cast<V*>(m + c) = m_new;
  }
  for (int i = 0; i < W; ++i)
    if (moved[i]) return true;
  return false;
}

template <int W>
__attribute__((always_inline)) inline void grad_row_body(float* s, float* dp, int64_t hi, int64_t nn, float scale,
                                                         float lse, float dvec) {
  using V = typename FV<W>::v;
  int64_t j = 0;
  for (; j + W <= hi; j += W) {
    V* sp = reinterpret_cast<V*>(s + j);
    V* dpp = reinterpret_cast<V*>(dp + j);
    V p = *sp * scale - lse;
    vexp<W>(p);
    *sp = p;
    *dpp = p * (*dpp - dvec);
  }
  for (; j < hi; ++j) {
    const float p = std::exp(s[j] * scale - lse);
    s[j] = p;
    dp[j] = p * (dp[j] - dvec);
  }
  for (; j < nn; ++j) s[j] = dp[j] = 0;
}

#if defined(__x86_64__) || defined(__i386__)
#define EMBER_X86 1
__attribute__((target("avx512f,avx512vl,avx2,fma"), flatten)) bool softmax_avx512(float* s, int64_t rows, int64_t nr,
                                                                         const int32_t* lim, float* m, float* l,
                                                                         float* alpha) {
  return softmax_cols_body<16>(s, rows, nr, lim, m, l, alpha);
}
__attribute__((target("avx512f,avx512vl,avx2,fma"), flatten)) void grad_avx512(float* s, float* dp, int64_t hi, int64_t nn,
                                                                      float sc, float l, float d) {
  grad_row_body<16>(s, dp, hi, nn, sc, l, d);
}
__attribute__((target("avx2,fma"))) bool softmax_avx2(float* s, int64_t rows, int64_t nr, const int32_t* lim, float* m,
                                                      float* l, float* alpha) {
  return softmax_cols_body<8>(s, rows, nr, lim, m, l, alpha);
}
__attribute__((target("avx2,fma"))) void grad_avx2(float* s, float* dp, int64_t hi, int64_t nn, float sc, float l,
                                                   float d) {
  grad_row_body<8>(s, dp, hi, nn, sc, l, d);
}
#endif
bool softmax_portable(float* s, int64_t rows, int64_t nr, const int32_t* lim, float* m, float* l, float* alpha) {
  return softmax_cols_body<4>(s, rows, nr, lim, m, l, alpha);
}
void grad_portable(float* s, float* dp, int64_t hi, int64_t nn, float sc, float l, float d) {
  grad_row_body<4>(s, dp, hi, nn, sc, l, d);
}

// Double keeps the exact running max (it is the reference the float kernels are checked against).
bool softmax_f64(double* s, int64_t rows, int64_t nr, const int32_t* lim, double* m, double* l, double* alpha) {
  constexpr double ninf = -std::numeric_limits<double>::infinity();
  bool moved = false;
  for (int64_t c = 0; c < nr; ++c) {
    double mx = ninf;
    for (int64_t r = 0; r < rows; ++r) {
      double& x = s[r * nr + c];
      if (lim && r >= lim[c]) x = ninf;
      mx = std::max(mx, x);
    }
    const double m_new = attention_math::online_max(m[c], mx), shift = m_new == ninf ? 0.0 : m_new;
    double sum = 0;
    for (int64_t r = 0; r < rows; ++r) sum += (s[r * nr + c] = std::exp(s[r * nr + c] - shift));
    alpha[c] = std::exp(m[c] - shift);
    l[c] = alpha[c] * l[c] + sum;
    moved |= m_new != m[c];
    m[c] = m_new;
  }
  return moved;
}
void grad_f64(double* s, double* dp, int64_t hi, int64_t nn, double scale, double lse, double dvec) {
  for (int64_t j = 0; j < nn; ++j) {
    if (j >= hi) {
      s[j] = dp[j] = 0;
      continue;
    }
    const double p = std::exp(s[j] * scale - lse);
    s[j] = p;
    dp[j] = p * (dp[j] - dvec);
  }
}

}  // namespace

template <>
Flash2Rows<float> flash2_rows<float>(CpuIsa isa) {
#ifdef EMBER_X86
  if (isa == CpuIsa::Avx512) return {softmax_avx512, grad_avx512};
  if (isa == CpuIsa::Avx2) return {softmax_avx2, grad_avx2};
#endif
  (void)isa;
  return {softmax_portable, grad_portable};
}
template <>
Flash2Rows<double> flash2_rows<double>(CpuIsa) {
  return {softmax_f64, grad_f64};
}

}  // namespace ember::cpu::attn
