// The portable kernels: plain loops that any compiler and CPU run, and the reference the AVX2
// kernels are tested against beside the float64 one.
#include <algorithm>
#include <cmath>
#include <vector>

#include "framework/core/half.h"
#include "ops/quant/cpu/kernels.h"

namespace ember::quant::cpu {

void product_portable(const Product& p, int64_t n0, int64_t n1) {
  const QuantizedMatrix& w = *p.w;
  const int64_t kpad = w.kpad, nb = w.blocks_per_row();
  std::vector<float> row(static_cast<size_t>(kpad));
  for (int64_t j = n0; j < n1; ++j) {
    // W's row j widened once, then used for every row of x.
    if (w.format == WeightFormat::BFloat16) {
      for (int64_t k = 0; k < kpad; ++k) row[size_t(k)] = bf16_bits_to_float(w.bf16[size_t(j * kpad + k)]);
    } else {
      for (int64_t b = 0; b < nb; ++b) {
        const float s = fp16_bits_to_float(w.scale[size_t(j * nb + b)]);
        for (int64_t k = b * kBlock; k < (b + 1) * kBlock; ++k) row[size_t(k)] = float(w.q[size_t(j * kpad + k)]) * s;
      }
    }
    for (int64_t i = 0; i < p.m; ++i) {
      const float* xi = p.x + i * kpad;
      float acc = 0.0f;
      for (int64_t k = 0; k < kpad; ++k) acc += xi[k] * row[size_t(k)];
      p.y[i * p.ldy + j] = acc + (p.bias ? p.bias[j] : 0.0f);
    }
  }
}

void quantize_activations(const float* x, int64_t m, int64_t kpad, int8_t* xq, float* xs) {
  const int64_t nb = kpad / kBlock;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t b = 0; b < nb; ++b) {
      const float* v = x + i * kpad + b * kBlock;
      float amax = 0.0f;
      for (int64_t k = 0; k < kBlock; ++k) amax = std::max(amax, std::fabs(v[k]));
      const float s = amax / 127.0f, inv = s > 0.0f ? 1.0f / s : 0.0f;
      xs[i * nb + b] = s;
      for (int64_t k = 0; k < kBlock; ++k)
        xq[i * kpad + b * kBlock + k] = int8_t(std::max(-127.0f, std::min(127.0f, std::nearbyint(v[k] * inv))));
    }
}

}  // namespace ember::quant::cpu
