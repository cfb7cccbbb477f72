// The many-rows kernel (prefill): W's columns are widened kTile at a time into a float32 scratch
// of kTile x kpad (96 KiB at kpad = 1024, 288 KiB at 3072: it stays in a Zen 3's 512 KiB L2), and
// a register-blocked kernel multiplies every row of x by that tile, 4 rows x 3 columns at a time:
// 12 accumulators, 3 tile vectors and an x vector fill the 16 AVX2 registers. The widening costs
// one pass over the tile per call, shared by all the rows.
#include <immintrin.h>

#include <algorithm>
#include <vector>

#include "framework/core/half.h"
#include "ops/quant/cpu/kernels.h"

#if defined(__x86_64__) || defined(__i386__)

namespace ember::quant::cpu {
namespace {

constexpr int64_t kTile = 24;

__attribute__((target("avx2,fma"))) inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Rows [j0, j1) of W as float32 into t (row stride kpad).
__attribute__((target("avx2,fma,f16c"))) void widen_tile(const QuantizedMatrix& w, int64_t j0, int64_t j1, float* t) {
  const int64_t kpad = w.kpad, nb = w.blocks_per_row();
  for (int64_t j = j0; j < j1; ++j) {
    float* out = t + (j - j0) * kpad;
    if (w.format == WeightFormat::BFloat16) {
      const uint16_t* h = w.bf16.data() + j * kpad;
      for (int64_t k = 0; k < kpad; k += 8)
        _mm256_storeu_ps(out + k, _mm256_castsi256_ps(_mm256_slli_epi32(
                                      _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + k))), 16)));
    } else {
      const int8_t* q = w.q.data() + j * kpad;
      for (int64_t b = 0; b < nb; ++b) {
        const __m256 s = _mm256_set1_ps(fp16_bits_to_float(w.scale[size_t(j * nb + b)]));
        for (int u = 0; u < 4; ++u) {
          const int64_t k = b * kBlock + 8 * u;
          const __m256i v = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q + k)));
          _mm256_storeu_ps(out + k, _mm256_mul_ps(s, _mm256_cvtepi32_ps(v)));
        }
      }
    }
  }
}

// y[i0 + r, j0 + c] = dot(x_{i0 + r}, t_c) for r < RM, c < RN.
template <int RM, int RN>
__attribute__((target("avx2,fma"))) void micro(const Product& p, int64_t i0, const float* t, int64_t j0) {
  const int64_t kpad = p.w->kpad;
  __m256 acc[RM][RN];
  for (int r = 0; r < RM; ++r)
    for (int c = 0; c < RN; ++c) acc[r][c] = _mm256_setzero_ps();
  const float* x = p.x + i0 * kpad;
  for (int64_t k = 0; k < kpad; k += 8) {
    __m256 tv[RN];
    for (int c = 0; c < RN; ++c) tv[c] = _mm256_loadu_ps(t + c * kpad + k);
    for (int r = 0; r < RM; ++r) {
      const __m256 xv = _mm256_loadu_ps(x + r * kpad + k);
      for (int c = 0; c < RN; ++c) acc[r][c] = _mm256_fmadd_ps(xv, tv[c], acc[r][c]);
    }
  }
  for (int r = 0; r < RM; ++r)
    for (int c = 0; c < RN; ++c)
      p.y[(i0 + r) * p.ldy + j0 + c] = hsum(acc[r][c]) + (p.bias ? p.bias[j0 + c] : 0.0f);
}

template <int RM>
void micro_cols(const Product& p, int64_t i0, const float* t, int64_t j0, int64_t cols) {
  switch (cols) {
    case 1: return micro<RM, 1>(p, i0, t, j0);
    case 2: return micro<RM, 2>(p, i0, t, j0);
    default: return micro<RM, 3>(p, i0, t, j0);
  }
}

}  // namespace

void product_tiles_avx2(const Product& p, int64_t n0, int64_t n1) {
  const int64_t kpad = p.w->kpad;
  static thread_local std::vector<float> scratch;
  if (scratch.size() < size_t(kTile * kpad)) scratch.resize(size_t(kTile * kpad));
  for (int64_t j0 = n0; j0 < n1; j0 += kTile) {
    const int64_t j1 = std::min(n1, j0 + kTile);
    widen_tile(*p.w, j0, j1, scratch.data());
    for (int64_t i0 = 0; i0 < p.m; i0 += 4) {
      const int64_t rows = std::min<int64_t>(4, p.m - i0);
      for (int64_t c = j0; c < j1; c += 3) {
        const float* t = scratch.data() + (c - j0) * kpad;
        const int64_t cols = std::min<int64_t>(3, j1 - c);
        switch (rows) {
          case 1: micro_cols<1>(p, i0, t, c, cols); break;
          case 2: micro_cols<2>(p, i0, t, c, cols); break;
          case 3: micro_cols<3>(p, i0, t, c, cols); break;
          default: micro_cols<4>(p, i0, t, c, cols); break;
        }
      }
    }
  }
}

}  // namespace ember::quant::cpu
#endif
