// AVX2 kernels for 1 to 3 rows of x (decode): each row of W is streamed from memory once per
// group of rows, so their cost per weight byte must stay below what the memory delivers. Each row
// of x keeps several independent FMA chains (four when widening W to float32 in registers, two in
// the integer dots).
#include <algorithm>

#include "framework/core/half.h"
#include "ops/quant/cpu/kernels.h"
#include "ops/common/cpu/cpu_has_f16c.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

namespace ember::quant::cpu {
namespace {

constexpr int kMaxRows = 3;
// How far ahead along a row of W the kernels prefetch, in bytes (the next rows follow in memory).
constexpr int64_t kPrefetch = 1024;

__attribute__((target("avx2,fma"))) inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Row j's float16 scales as float32, eight at a time with F16C.
__attribute__((target("avx2,fma,f16c"))) void widen_scales(const uint16_t* h, int64_t nb, float* out) {
  int64_t b = 0;
  for (; b + 8 <= nb; b += 8)
    _mm256_storeu_ps(out + b, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + b))));
  for (; b < nb; ++b) out[b] = fp16_bits_to_float(h[b]);
}

template <int R>
__attribute__((target("avx2,fma"))) void store(const Product& p, int64_t i0, int64_t j, __m256 (&acc)[R][4]) {
  for (int r = 0; r < R; ++r) {
    const __m256 s = _mm256_add_ps(_mm256_add_ps(acc[r][0], acc[r][1]), _mm256_add_ps(acc[r][2], acc[r][3]));
    p.y[(i0 + r) * p.ldy + j] = hsum(s) + (p.bias ? p.bias[j] : 0.0f);
  }
}

// Int8: a block's 32 values become four float vectors times the block's scale (shared by the
// rows), then one FMA per vector and row.
template <int R>
__attribute__((target("avx2,fma,f16c"))) void int8_widen(const Product& p, int64_t i0, int64_t n0, int64_t n1) {
  const QuantizedMatrix& w = *p.w;
  const int64_t kpad = w.kpad, nb = w.blocks_per_row();
  float sc[4096 / kBlock + 8];  // one row's scales; rows longer than 4096 take the loop below in parts
  for (int64_t j = n0; j < n1; ++j) {
    const int8_t* q = w.q.data() + j * kpad;
    __m256 acc[R][4];
    for (int r = 0; r < R; ++r)
      for (int u = 0; u < 4; ++u) acc[r][u] = _mm256_setzero_ps();
    for (int64_t c0 = 0; c0 < nb; c0 += 4096 / kBlock) {
      const int64_t c1 = std::min(nb, c0 + 4096 / kBlock);
      widen_scales(w.scale.data() + j * nb + c0, c1 - c0, sc);
      for (int64_t b = c0; b < c1; ++b) {
        const int8_t* qb = q + b * kBlock;
        _mm_prefetch(reinterpret_cast<const char*>(qb + kPrefetch), _MM_HINT_T0);
        const __m256 s = _mm256_broadcast_ss(sc + (b - c0));
        __m256 wv[4];
        for (int u = 0; u < 4; ++u)
          wv[u] = _mm256_mul_ps(
              s, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(qb + 8 * u)))));
        for (int r = 0; r < R; ++r) {
          const float* xr = p.x + (i0 + r) * kpad + b * kBlock;
          for (int u = 0; u < 4; ++u) acc[r][u] = _mm256_fmadd_ps(wv[u], _mm256_loadu_ps(xr + 8 * u), acc[r][u]);
        }
      }
    }
    store<R>(p, i0, j, acc);
  }
}

// BFloat16: eight values widen to float32 by a zero-extension and a 16-bit shift.
template <int R>
__attribute__((target("avx2,fma"))) void bf16_widen(const Product& p, int64_t i0, int64_t n0, int64_t n1) {
  const QuantizedMatrix& w = *p.w;
  const int64_t kpad = w.kpad;
  for (int64_t j = n0; j < n1; ++j) {
    const uint16_t* h = w.bf16.data() + j * kpad;
    __m256 acc[R][4];
    for (int r = 0; r < R; ++r)
      for (int u = 0; u < 4; ++u) acc[r][u] = _mm256_setzero_ps();
    for (int64_t k = 0; k < kpad; k += kBlock) {
      _mm_prefetch(reinterpret_cast<const char*>(h + k) + kPrefetch, _MM_HINT_T0);
      __m256 wv[4];
      for (int u = 0; u < 4; ++u)
        wv[u] = _mm256_castsi256_ps(_mm256_slli_epi32(
            _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + k + 8 * u))), 16));
      for (int r = 0; r < R; ++r) {
        const float* xr = p.x + (i0 + r) * kpad + k;
        for (int u = 0; u < 4; ++u) acc[r][u] = _mm256_fmadd_ps(wv[u], _mm256_loadu_ps(xr + 8 * u), acc[r][u]);
      }
    }
    store<R>(p, i0, j, acc);
  }
}

// Int8 times int8: |w| (unsigned) times x with w's sign (signed) in maddubs gives 16 sums of two
// products, at most 2 * 127 * 127 = 32258, so no 16-bit saturation; madd against ones widens them
// to eight int32 sums, which become float32 and take both scales. Two blocks per step keep two
// FMA chains per row (acc[r][0..1]; [2..3] stay zero for store()).
template <int R>
__attribute__((target("avx2,fma,f16c"))) void int8_dots(const Product& p, int64_t i0, int64_t n0, int64_t n1) {
  const QuantizedMatrix& w = *p.w;
  const int64_t kpad = w.kpad, nb = w.blocks_per_row();
  const __m256i ones = _mm256_set1_epi16(1);
  constexpr int64_t kChunk = 4096 / kBlock;
  float sc[kChunk + 8], d[R][kChunk + 8];  // W's scales, then W's times x's for each row
  for (int64_t j = n0; j < n1; ++j) {
    const int8_t* q = w.q.data() + j * kpad;
    __m256 acc[R][4];
    for (int r = 0; r < R; ++r)
      for (int u = 0; u < 4; ++u) acc[r][u] = _mm256_setzero_ps();
    for (int64_t c0 = 0; c0 < nb; c0 += kChunk) {
      const int64_t c1 = std::min(nb, c0 + kChunk);
      widen_scales(w.scale.data() + j * nb + c0, c1 - c0, sc);
      // Both scales of each block multiplied eight blocks at a time, so the loop below loads one.
      for (int r = 0; r < R; ++r) {
        const float* xs = p.xs + (i0 + r) * nb + c0;
        int64_t b = 0;
        for (; b + 8 <= c1 - c0; b += 8)
          _mm256_storeu_ps(d[r] + b, _mm256_mul_ps(_mm256_loadu_ps(sc + b), _mm256_loadu_ps(xs + b)));
        for (; b < c1 - c0; ++b) d[r][b] = sc[b] * xs[b];
      }
      for (int64_t b = c0; b < c1; ++b) {
        const int8_t* qb = q + b * kBlock;
        _mm_prefetch(reinterpret_cast<const char*>(qb + kPrefetch), _MM_HINT_T0);
        const __m256i wq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qb));
        const __m256i aw = _mm256_sign_epi8(wq, wq);
        const int u = int(b & 1);
        for (int r = 0; r < R; ++r) {
          const __m256i xq =
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p.xq + (i0 + r) * kpad + b * kBlock));
          const __m256i d16 = _mm256_maddubs_epi16(aw, _mm256_sign_epi8(xq, wq));
          const __m256 dot = _mm256_cvtepi32_ps(_mm256_madd_epi16(d16, ones));
          acc[r][u] = _mm256_fmadd_ps(dot, _mm256_broadcast_ss(d[r] + (b - c0)), acc[r][u]);
        }
      }
    }
    store<R>(p, i0, j, acc);
  }
}

// Runs kernel<R> over the rows of x in groups of up to three.
#define EMBER_QUANT_FOR_ROW_GROUPS(kernel, p, n0, n1)           \
  for (int64_t i0 = 0; i0 < (p).m; i0 += kMaxRows) {            \
    switch (std::min<int64_t>(kMaxRows, (p).m - i0)) {          \
      case 1: kernel<1>(p, i0, n0, n1); break;                  \
      case 2: kernel<2>(p, i0, n0, n1); break;                  \
      default: kernel<3>(p, i0, n0, n1); break;                 \
    }                                                           \
  }

}  // namespace

bool has_avx2_f16c() {
  static const bool ok = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && ember::cpu::cpu_has_f16c();
  }();
  return ok;
}

void product_few_rows_avx2(const Product& p, int64_t n0, int64_t n1) {
  if (p.w->format == WeightFormat::BFloat16) {
    EMBER_QUANT_FOR_ROW_GROUPS(bf16_widen, p, n0, n1);
  } else {
    EMBER_QUANT_FOR_ROW_GROUPS(int8_widen, p, n0, n1);
  }
}

void product_int_dots_avx2(const Product& p, int64_t n0, int64_t n1) {
  EMBER_QUANT_FOR_ROW_GROUPS(int8_dots, p, n0, n1);
}

}  // namespace ember::quant::cpu
#endif
