// AVX2 kernels for 1 to 3 rows of x (decode): each row of W is streamed from memory once per
// group of rows, so their cost per weight byte must stay below what the memory delivers. The
// kernels keep one FMA chain per (row of x, row of W) pair over several rows of W read at once.
#include <algorithm>
#include <type_traits>

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
// to eight int32 sums, which become float32 and take both blocks' scales (their products computed
// eight blocks at a time per chunk, so the inner loop loads one). Streams as in int8_streams: S
// rows of W `span` apart, each x block loaded once for all S, one FMA chain per (row of x, row of
// W) in block order whatever S, so the split of the columns does not change a bit.
template <int S, int R>
__attribute__((target("avx2,fma,f16c"))) void dots_streams(const Product& p, int64_t i0, int64_t n0, int64_t span) {
  const QuantizedMatrix& w = *p.w;
  const int64_t kpad = w.kpad, nb = w.blocks_per_row();
  const __m256i ones = _mm256_set1_epi16(1);
  constexpr int64_t kChunk = 128;  // blocks per chunk of scale products
  alignas(32) float d[R][S][kChunk + 8];
  for (int64_t j = n0; j < n0 + span; ++j) {
    const int8_t* q8[S];
    for (int q = 0; q < S; ++q) {
      q8[q] = w.q.data() + (j + q * span) * kpad;
      // The scales are S more streams (nb * 2 bytes per row, apart from the values): fetched two
      // rows ahead, or each row would start by waiting on memory for them.
      if (j + 2 < n0 + span) {
        const char* ahead = reinterpret_cast<const char*>(w.scale.data() + (j + 2 + q * span) * nb);
        for (int64_t c = 0; c < nb * 2; c += 64) _mm_prefetch(ahead + c, _MM_HINT_T0);
      }
    }
    __m256 acc[R][S];
    for (int r = 0; r < R; ++r)
      for (int q = 0; q < S; ++q) acc[r][q] = _mm256_setzero_ps();
    for (int64_t c0 = 0; c0 < nb; c0 += kChunk) {
      const int64_t c1 = std::min(nb, c0 + kChunk);
      for (int q = 0; q < S; ++q) {
        const uint16_t* ws = w.scale.data() + (j + q * span) * nb + c0;
        int64_t b = 0;
        for (; b + 8 <= c1 - c0; b += 8) {
          const __m256 s8 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(ws + b)));
          for (int r = 0; r < R; ++r)
            _mm256_store_ps(d[r][q] + b, _mm256_mul_ps(s8, _mm256_loadu_ps(p.xs + (i0 + r) * nb + c0 + b)));
        }
        for (; b < c1 - c0; ++b)
          for (int r = 0; r < R; ++r) d[r][q][b] = _cvtsh_ss(ws[b]) * p.xs[(i0 + r) * nb + c0 + b];
      }
      for (int64_t b = c0; b < c1; ++b) {
        __m256i xq[R];
        for (int r = 0; r < R; ++r)
          xq[r] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p.xq + (i0 + r) * kpad + b * kBlock));
        for (int q = 0; q < S; ++q) {
          const int8_t* qb = q8[q] + b * kBlock;
          _mm_prefetch(reinterpret_cast<const char*>(qb) + kPrefetch, _MM_HINT_T0);
          const __m256i wq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qb));
          const __m256i aw = _mm256_sign_epi8(wq, wq);
          for (int r = 0; r < R; ++r) {
            const __m256i d16 = _mm256_maddubs_epi16(aw, _mm256_sign_epi8(xq[r], wq));
            const __m256 dot = _mm256_cvtepi32_ps(_mm256_madd_epi16(d16, ones));
            acc[r][q] = _mm256_fmadd_ps(dot, _mm256_broadcast_ss(d[r][q] + (b - c0)), acc[r][q]);
          }
        }
      }
    }
    for (int r = 0; r < R; ++r)
      for (int q = 0; q < S; ++q)
        p.y[(i0 + r) * p.ldy + j + q * span] = hsum(acc[r][q]) + (p.bias ? p.bias[j + q * span] : 0.0f);
  }
}

template <int R>
void dots_streamed(const Product& p, int64_t i0, int64_t n0, int64_t n1, int streams) {
  const int s = (R == 1 && streams >= 8) ? 8 : 4;
  const int64_t span = (n1 - n0) / s;
  if (span > 0) s == 8 ? dots_streams<8, R>(p, i0, n0, span) : dots_streams<4, R>(p, i0, n0, span);
  const int64_t rest = n0 + s * span;
  if (rest < n1) dots_streams<1, R>(p, i0, rest, n1 - rest);
}

// Rows of x in groups of up to three: f(std::integral_constant<int, R>, i0) for each group.
template <class F>
void for_row_groups(int64_t m, F f) {
  for (int64_t i0 = 0; i0 < m; i0 += kMaxRows) {
    switch (std::min<int64_t>(kMaxRows, m - i0)) {
      case 1: f(std::integral_constant<int, 1>(), i0); break;
      case 2: f(std::integral_constant<int, 2>(), i0); break;
      default: f(std::integral_constant<int, 3>(), i0); break;
    }
  }
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
  for_row_groups(p.m, [&](auto rows, int64_t i0) { streamed<decltype(rows)::value>(p, i0, n0, n1, streams); });
}

void product_int_dots_avx2(const Product& p, int64_t n0, int64_t n1) {
  const int streams = ember::cpu::gemv_streams();
  for_row_groups(p.m, [&](auto rows, int64_t i0) { dots_streamed<decltype(rows)::value>(p, i0, n0, n1, streams); });
}

}  // namespace ember::quant::cpu
#endif
