#include "models/sparsity/vector_kernels.h"

namespace ember::sparsity {

__attribute__((target_clones("avx512f", "avx2", "default"))) void dot_tokens(const float* w, const float* x,
                                                                            int64_t batch, int64_t n, float* out) {
  for (int64_t b = 0; b < batch; ++b) {
    const float* xb = x + b * n;
    float s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t c = 0; c < n; ++c) s += w[c] * xb[c];
    out[b] = s;
  }
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void axpy(float a, const float* w, float* y, int64_t n) {
#pragma omp simd
  for (int64_t c = 0; c < n; ++c) y[c] += a * w[c];
}

}  // namespace ember::sparsity
