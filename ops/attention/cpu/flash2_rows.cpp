// Vector versions of the FlashAttention-2 row operations (see flash2_rows.h), written once with
// GCC vector extensions and instantiated per instruction set as in ops/matmul/cpu/microkernels.cpp.
// exp is the polynomial of tile_math.h's exp_shifted<float> on whole vectors; its argument is
// clamped below at -100 first (exp underflows to 0 there anyway), which keeps the integer
// conversion of x / ln 2 in range for any finite or -inf input.
#include "ops/attention/cpu/flash2_rows.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/attention/attention_math.h"
#include "ops/matmul/cpu/kernels.h"

namespace ember::cpu::attn {
namespace {

template <int W>
struct FV {
  typedef float v __attribute__((vector_size(W * 4), aligned(4), may_alias));
  typedef int32_t vi __attribute__((vector_size(W * 4), aligned(4), may_alias));
};

// x = exp(x) in place (by reference: a vector passed by value would change the ABI with the ISA).
template <int W>
__attribute__((always_inline)) inline void vexp(typename FV<W>::v& x) {
  using V = typename FV<W>::v;
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

template <int W>
__attribute__((always_inline)) inline void softmax_row_body(float* s, int64_t jmax, int64_t nn, float scale,
                                                            float m_old, float* m_new, float* sum) {
  using V = typename FV<W>::v;
  constexpr float ninf = -std::numeric_limits<float>::infinity();
  V vm = V{} + ninf;
  int64_t j = 0;
  for (; j + W <= jmax; j += W) {
    V* p = reinterpret_cast<V*>(s + j);
    const V x = *p * scale;
    *p = x;
    vm = vm > x ? vm : x;
  }
  float mx = ninf;
  for (int l = 0; l < W; ++l) mx = std::max(mx, vm[l]);
  for (; j < jmax; ++j) {
    s[j] *= scale;
    mx = std::max(mx, s[j]);
  }
  const float mn = attention_math::online_max(m_old, mx);
  V acc = {};
  for (j = 0; j + W <= jmax; j += W) {
    V* p = reinterpret_cast<V*>(s + j);
    V e = *p - mn;
    vexp<W>(e);
    *p = e;
    acc += e;
  }
  float sm = 0;
  for (int l = 0; l < W; ++l) sm += acc[l];
  for (; j < jmax; ++j) sm += (s[j] = std::exp(s[j] - mn));
  for (j = jmax; j < nn; ++j) s[j] = 0;
  *m_new = mn;
  *sum = sm;
}

template <int W>
__attribute__((always_inline)) inline void grad_row_body(float* s, float* dp, int64_t lo, int64_t hi, int64_t nn,
                                                         float scale, const float* lse, const float* dvec) {
  using V = typename FV<W>::v;
  for (int64_t j = 0; j < lo; ++j) s[j] = dp[j] = 0;
  int64_t j = lo;
  for (; j + W <= hi; j += W) {
    V* sp = reinterpret_cast<V*>(s + j);
    V* dpp = reinterpret_cast<V*>(dp + j);
    V p = *sp * scale - *reinterpret_cast<const V*>(lse + j);
    vexp<W>(p);
    *sp = p;
    *dpp = p * (*dpp - *reinterpret_cast<const V*>(dvec + j));
  }
  for (; j < hi; ++j) {
    const float p = std::exp(s[j] * scale - lse[j]);
    s[j] = p;
    dp[j] = p * (dp[j] - dvec[j]);
  }
  for (j = std::max(lo, hi); j < nn; ++j) s[j] = dp[j] = 0;
}

#if defined(__x86_64__) || defined(__i386__)
#define EMBER_X86 1
__attribute__((target("avx512f,avx512vl,avx2,fma"))) void softmax_avx512(float* s, int64_t jmax, int64_t nn, float sc,
                                                                         float m, float* mn, float* sum) {
  softmax_row_body<16>(s, jmax, nn, sc, m, mn, sum);
}
__attribute__((target("avx512f,avx512vl,avx2,fma"))) void grad_avx512(float* s, float* dp, int64_t lo, int64_t hi,
                                                                      int64_t nn, float sc, const float* l,
                                                                      const float* d) {
  grad_row_body<16>(s, dp, lo, hi, nn, sc, l, d);
}
__attribute__((target("avx2,fma"))) void softmax_avx2(float* s, int64_t jmax, int64_t nn, float sc, float m, float* mn,
                                                      float* sum) {
  softmax_row_body<8>(s, jmax, nn, sc, m, mn, sum);
}
__attribute__((target("avx2,fma"))) void grad_avx2(float* s, float* dp, int64_t lo, int64_t hi, int64_t nn, float sc,
                                                   const float* l, const float* d) {
  grad_row_body<8>(s, dp, lo, hi, nn, sc, l, d);
}
#endif
void softmax_portable(float* s, int64_t jmax, int64_t nn, float sc, float m, float* mn, float* sum) {
  softmax_row_body<4>(s, jmax, nn, sc, m, mn, sum);
}
void grad_portable(float* s, float* dp, int64_t lo, int64_t hi, int64_t nn, float sc, const float* l, const float* d) {
  grad_row_body<4>(s, dp, lo, hi, nn, sc, l, d);
}

void softmax_f64(double* s, int64_t jmax, int64_t nn, double scale, double m_old, double* m_new, double* sum) {
  double mx = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < jmax; ++j) mx = std::max(mx, s[j] *= scale);
  const double mn = attention_math::online_max(m_old, mx);
  double sm = 0;
  for (int64_t j = 0; j < jmax; ++j) sm += (s[j] = std::exp(s[j] - mn));
  for (int64_t j = jmax; j < nn; ++j) s[j] = 0;
  *m_new = mn;
  *sum = sm;
}
void grad_f64(double* s, double* dp, int64_t lo, int64_t hi, int64_t nn, double scale, const double* lse,
              const double* dvec) {
  for (int64_t j = 0; j < nn; ++j) {
    if (j < lo || j >= hi) {
      s[j] = dp[j] = 0;
      continue;
    }
    const double p = std::exp(s[j] * scale - lse[j]);
    s[j] = p;
    dp[j] = p * (dp[j] - dvec[j]);
  }
}

Flash2Rows<float> pick_f32() {
#ifdef EMBER_X86
  if (best_cpu_isa() == CpuIsa::Avx512) return {softmax_avx512, grad_avx512};
  if (best_cpu_isa() == CpuIsa::Avx2) return {softmax_avx2, grad_avx2};
#endif
  return {softmax_portable, grad_portable};
}

}  // namespace

template <>
const Flash2Rows<float>& flash2_rows<float>() {
  static const Flash2Rows<float> r = pick_f32();
  return r;
}
template <>
const Flash2Rows<double>& flash2_rows<double>() {
  static const Flash2Rows<double> r{softmax_f64, grad_f64};
  return r;
}

}  // namespace ember::cpu::attn
