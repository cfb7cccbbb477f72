// AVX2 kernels for 1 to 3 rows of x (decode): each row of W is streamed from memory once per
// group of rows, so their cost per weight byte must stay below what the memory delivers. The
// widening kernels keep one FMA chain per (row of x, row of W) pair over several rows of W; the
// integer dots keep two chains per row of x.
#include <algorithm>

#include "framework/core/half.h"
#include "ops/quant/cpu/kernels.h"
#include "ops/common/cpu/cpu_has_f16c.h"
#include "ops/matmul/cpu/gemv_avx2.h"

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

// Widening kernels: int8 (times the block's scale) or bf16 (a zero-extension and a 16-bit shift)
// to float32 in registers, then FMAs with x. One row of W at a time is a single sequential stream
// whose misses the core waits for (bf16 read 3 GB/s where the float32 GEMV, with four streams, read
// 6), so these take S rows of W `span` rows apart (different pages), as the float32 GEMV does
// (gemv_avx2.cpp): S streams in flight, each x vector loaded once for all S, one accumulator per
// (row of x, row of W) pair. The sum of each pair runs in the same order whatever S, so the
// threads' split of the columns does not change a bit.
template <int S, int R>
__attribute__((target("avx2,fma"))) void bf16_streams(const Product& p, int64_t i0, int64_t n0, int64_t span) {
  const QuantizedMatrix& w = *p.w;
  const int64_t kpad = w.kpad;
  for (int64_t j = n0; j < n0 + span; ++j) {
    const uint16_t* h[S];
    for (int q = 0; q < S; ++q) h[q] = w.bf16.data() + (j + q * span) * kpad;
    __m256 acc[R][S];
    for (int r = 0; r < R; ++r)
      for (int q = 0; q < S; ++q) acc[r][q] = _mm256_setzero_ps();
    for (int64_t k = 0; k < kpad; k += 8) {
      if ((k & (kBlock - 1)) == 0)
        for (int q = 0; q < S; ++q) _mm_prefetch(reinterpret_cast<const char*>(h[q] + k) + kPrefetch, _MM_HINT_T0);
      __m256 xv[R];
      for (int r = 0; r < R; ++r) xv[r] = _mm256_loadu_ps(p.x + (i0 + r) * kpad + k);
      for (int q = 0; q < S; ++q) {
        const __m256 wv = _mm256_castsi256_ps(
            _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h[q] + k))), 16));
        for (int r = 0; r < R; ++r) acc[r][q] = _mm256_fmadd_ps(wv, xv[r], acc[r][q]);
      }
    }
    for (int r = 0; r < R; ++r)
      for (int q = 0; q < S; ++q)
        p.y[(i0 + r) * p.ldy + j + q * span] = hsum(acc[r][q]) + (p.bias ? p.bias[j + q * span] : 0.0f);
  }
}

template <int S, int R>
__attribute__((target("avx2,fma,f16c"))) void int8_streams(const Product& p, int64_t i0, int64_t n0, int64_t span) {
  const QuantizedMatrix& w = *p.w;
  const int64_t kpad = w.kpad, nb = w.blocks_per_row();
  for (int64_t j = n0; j < n0 + span; ++j) {
    const int8_t* q8[S];
    const uint16_t* sc[S];
    for (int q = 0; q < S; ++q) {
      q8[q] = w.q.data() + (j + q * span) * kpad;
      sc[q] = w.scale.data() + (j + q * span) * nb;
    }
    __m256 acc[R][S];
    for (int r = 0; r < R; ++r)
      for (int q = 0; q < S; ++q) acc[r][q] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
      float s[S];
      for (int q = 0; q < S; ++q) {
        _mm_prefetch(reinterpret_cast<const char*>(q8[q] + b * kBlock) + kPrefetch, _MM_HINT_T0);
        s[q] = _cvtsh_ss(sc[q][b]);
      }
      for (int u = 0; u < 4; ++u) {
        const int64_t k = b * kBlock + 8 * u;
        __m256 xv[R];
        for (int r = 0; r < R; ++r) xv[r] = _mm256_loadu_ps(p.x + (i0 + r) * kpad + k);
        for (int q = 0; q < S; ++q) {
          const __m256 wv = _mm256_mul_ps(_mm256_broadcast_ss(s + q), _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(
                                                                        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(q8[q] + k)))));
          for (int r = 0; r < R; ++r) acc[r][q] = _mm256_fmadd_ps(wv, xv[r], acc[r][q]);
        }
      }
    }
    for (int r = 0; r < R; ++r)
      for (int q = 0; q < S; ++q)
        p.y[(i0 + r) * p.ldy + j + q * span] = hsum(acc[r][q]) + (p.bias ? p.bias[j + q * span] : 0.0f);
  }
}

// Columns [n0, n1) for rows i0.. of x (R of them): S streams over the first S * span columns, one
// stream over the rest. One row of x may take eight streams (eight accumulators); two or three
// rows take four, which keeps the accumulators in registers.
template <int R>
void streamed(const Product& p, int64_t i0, int64_t n0, int64_t n1, int streams) {
  const bool bf16 = p.w->format == WeightFormat::BFloat16;
  const int s = (R == 1 && streams >= 8) ? 8 : 4;
  const int64_t span = (n1 - n0) / s;
  if (span > 0) {
    if (s == 8) bf16 ? bf16_streams<8, R>(p, i0, n0, span) : int8_streams<8, R>(p, i0, n0, span);
    else bf16 ? bf16_streams<4, R>(p, i0, n0, span) : int8_streams<4, R>(p, i0, n0, span);
  }
  const int64_t rest = n0 + s * span;
  if (rest < n1) bf16 ? bf16_streams<1, R>(p, i0, rest, n1 - rest) : int8_streams<1, R>(p, i0, rest, n1 - rest);
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
  const int streams = ember::cpu::gemv_streams();
  for (int64_t i0 = 0; i0 < p.m; i0 += kMaxRows) {
    switch (std::min<int64_t>(kMaxRows, p.m - i0)) {
      case 1: streamed<1>(p, i0, n0, n1, streams); break;
      case 2: streamed<2>(p, i0, n0, n1, streams); break;
      default: streamed<3>(p, i0, n0, n1, streams); break;
    }
  }
}

void product_int_dots_avx2(const Product& p, int64_t n0, int64_t n1) {
  EMBER_QUANT_FOR_ROW_GROUPS(int8_dots, p, n0, n1);
}

}  // namespace ember::quant::cpu
#endif
