// The two inner loops of the gathered sparse MLP and the predictor's scorer, compiled for AVX-512,
// AVX2 and baseline x86-64 and chosen when the program loads (GCC function multi-versioning), as
// Ember's matmul micro-kernels choose theirs at run time.
#pragma once
#include <cstdint>

namespace ember::sparsity {

// out[b] = dot(w, x + b * n) for b in [0, batch): one read of w serves every token.
void dot_tokens(const float* w, const float* x, int64_t batch, int64_t n, float* out);
// y[i] += a * w[i] for i in [0, n).
void axpy(float a, const float* w, float* y, int64_t n);

}  // namespace ember::sparsity
