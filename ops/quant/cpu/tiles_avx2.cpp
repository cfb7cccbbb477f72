// The many-rows kernel (prefill): W is widened to float32 one panel of 16 output columns at a
// time, stored k-major (panel[k * 16 + c]: kpad x 16 floats, 48 KiB at kpad = 768, 192 KiB at
// 3072, so it stays in a Zen 3's 512 KiB L2, never the whole matrix), and an outer-product kernel
// multiplies 6 rows of x by the panel: per k, two panel vectors and six broadcasts of x feed 12
// FMAs into 12 accumulators that stay in registers for the whole of k (no horizontal sums), the
// shape of the library's float32 micro-kernels. Widening costs one pass over the panel per call,
// shared by all the rows.
#include <algorithm>
#include <vector>

#include "framework/core/half.h"
#include "ops/quant/cpu/kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

namespace ember::quant::cpu {
namespace {

constexpr int64_t kPanel = 16;  // output columns per panel: two AVX2 vectors
constexpr int kRows = 6;        // rows of x per micro-kernel call: 12 accumulators + 2 + 1 registers

// Columns [j0, j0 + cols) of W's rows as a k-major float32 panel (columns past cols are zero).
// One block of 32 values of each column is widened into `tmp` (2 KiB, in L1), then written to the
// panel in k order: the panel's cache lines are filled front to back (scattering each column into
// it with a 64-byte stride cost as much as the products, where the panel outgrows the L1).
__attribute__((target("avx2,fma,f16c"))) void widen_panel(const QuantizedMatrix& w, int64_t j0, int64_t cols,
                                                            float* panel) {
  const int64_t kpad = w.kpad, nb = w.blocks_per_row();
  alignas(32) float tmp[kPanel][kBlock];
  if (cols < kPanel) std::fill(&tmp[0][0], &tmp[0][0] + kPanel * kBlock, 0.0f);
  for (int64_t b = 0; b < nb; ++b) {
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t j = j0 + c, k0 = b * kBlock;
      if (w.format == WeightFormat::BFloat16) {
        const uint16_t* h = w.bf16.data() + j * kpad + k0;
        for (int u = 0; u < 4; ++u)
          _mm256_store_ps(tmp[c] + 8 * u, _mm256_castsi256_ps(_mm256_slli_epi32(
                                              _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + 8 * u))), 16)));
      } else {
        const int8_t* q = w.q.data() + j * kpad + k0;
        const __m256 s = _mm256_set1_ps(fp16_bits_to_float(w.scale[size_t(j * nb + b)]));
        for (int u = 0; u < 4; ++u) {
          const __m256i v = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q + 8 * u)));
          _mm256_store_ps(tmp[c] + 8 * u, _mm256_mul_ps(s, _mm256_cvtepi32_ps(v)));
        }
      }
    }
    float* out = panel + b * kBlock * kPanel;
    for (int64_t k = 0; k < kBlock; ++k)
      for (int64_t c = 0; c < kPanel; ++c) out[k * kPanel + c] = tmp[c][k];
  }
}

// y[i0 + r, j0 + c] = dot(x_{i0 + r}, panel column c) (+ bias) for r < RM, c < cols. The 12
// accumulators are named variables: held in an array, GCC stored every one of them to the stack
// on each step of k (a third of the speed).
template <int RM>
__attribute__((target("avx2,fma"))) void micro(const Product& p, int64_t i0, const float* panel, int64_t j0,
                                               int64_t cols) {
  const int64_t kpad = p.w->kpad;
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00,
         c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  const float* x = p.x + i0 * kpad;
  for (int64_t k = 0; k < kpad; ++k) {
    const __m256 b0 = _mm256_loadu_ps(panel + k * kPanel), b1 = _mm256_loadu_ps(panel + k * kPanel + 8);
#define EMBER_QUANT_ROW(r)                                   \
  if constexpr (RM > r) {                                    \
    const __m256 a = _mm256_broadcast_ss(x + r * kpad + k);  \
    c##r##0 = _mm256_fmadd_ps(a, b0, c##r##0);               \
    c##r##1 = _mm256_fmadd_ps(a, b1, c##r##1);               \
  }
    EMBER_QUANT_ROW(0)
    EMBER_QUANT_ROW(1)
    EMBER_QUANT_ROW(2)
    EMBER_QUANT_ROW(3)
    EMBER_QUANT_ROW(4)
    EMBER_QUANT_ROW(5)
#undef EMBER_QUANT_ROW
  }
  const __m256 acc[6][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
  alignas(32) float out[kPanel];
  for (int r = 0; r < RM; ++r) {
    _mm256_store_ps(out, acc[r][0]);
    _mm256_store_ps(out + 8, acc[r][1]);
    float* y = p.y + (i0 + r) * p.ldy + j0;
    for (int64_t c = 0; c < cols; ++c) y[c] = out[c] + (p.bias ? p.bias[j0 + c] : 0.0f);
  }
}

}  // namespace

void product_tiles_avx2(const Product& p, int64_t n0, int64_t n1) {
  const int64_t kpad = p.w->kpad;
  static thread_local std::vector<float> panel;
  if (panel.size() < size_t(kPanel * kpad)) panel.resize(size_t(kPanel * kpad));
  for (int64_t j0 = n0; j0 < n1; j0 += kPanel) {
    const int64_t cols = std::min(kPanel, n1 - j0);
    widen_panel(*p.w, j0, cols, panel.data());
    for (int64_t i0 = 0; i0 < p.m; i0 += kRows) {
      switch (std::min<int64_t>(kRows, p.m - i0)) {
        case 1: micro<1>(p, i0, panel.data(), j0, cols); break;
        case 2: micro<2>(p, i0, panel.data(), j0, cols); break;
        case 3: micro<3>(p, i0, panel.data(), j0, cols); break;
        case 4: micro<4>(p, i0, panel.data(), j0, cols); break;
        case 5: micro<5>(p, i0, panel.data(), j0, cols); break;
        default: micro<6>(p, i0, panel.data(), j0, cols); break;
      }
    }
  }
}

}  // namespace ember::quant::cpu
#endif
