// AVX2 kernels for the softmax family's rows: glibc's scalar expf kept softmax and cross_entropy
// at a few percent of memory bandwidth. exp is computed 8 lanes at a time by the polynomial in
// ops/common/cpu/avx2_math.h (relative error below 3e-7, flushed to 0 below -87.3). Chosen at run
// time, so the library still runs on CPUs without AVX2 (the scalar path is the reference).
#pragma once
#include <cstdint>

namespace ember::cpu {

bool have_avx2_fma();  // cached CPU feature check

// For a contiguous row with no NaN and a finite maximum: sets max and sum = sum_k exp(x_k - max)
// and returns true; returns false (touching nothing) for rows the scalar path must handle.
bool max_sum_exp_avx2(const float* row, int64_t len, float& max, double& sum);
// Softmax of a contiguous row in one exp per element: max, then dst = exp(row - max) while
// summing, then dst *= 1 / sum. Returns false (touching nothing) for rows with a NaN or no finite
// maximum, which the scalar path defines.
bool softmax_row_avx2(const float* row, int64_t len, float* dst);
// dst[k] = exp(row[k] - shift) * scale, for contiguous row and dst.
void exp_scale_avx2(const float* row, int64_t len, float shift, float scale, float* dst);
// exp of one float by the same polynomial (tests compare it with std::exp).
float exp_avx2_scalar_check(float x);

}  // namespace ember::cpu
