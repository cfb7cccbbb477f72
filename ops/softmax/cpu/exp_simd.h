// Vectorised kernels for the softmax family's rows: glibc's scalar expf kept softmax and
// cross_entropy at a few percent of memory bandwidth. exp is computed 16 lanes at a time with
// AVX-512 where the CPU has it, else 8 lanes with AVX2+FMA (ops/common/cpu/avx*_math.h: relative
// error below 3e-7, flushed to 0 below -87.3); chosen at run time, so the library still runs on
// CPUs with neither, where these report "not handled" and the scalar path (the reference) runs.
#pragma once
#include <cstdint>

namespace ember::cpu {

bool have_simd_exp();        // AVX2+FMA or AVX-512F, checked once
const char* simd_exp_isa();  // "avx512", "avx2" or "none"

// For a contiguous row with no NaN and a finite maximum: sets max and sum = sum_k exp(x_k - max)
// and returns true; returns false (touching nothing) for rows the scalar path must handle.
bool max_sum_exp_simd(const float* row, int64_t len, float& max, double& sum);
// Softmax of a contiguous row in one exp per element: max, then dst = exp(row - max) while
// summing, then dst *= 1 / sum. Returns false (touching nothing) for rows with a NaN or no finite
// maximum, which the scalar path defines.
bool softmax_row_simd(const float* row, int64_t len, float* dst);
// dst[k] = exp(row[k] - shift) * scale for contiguous row and dst, shift >= max(row) (finite).
void exp_scale_simd(const float* row, int64_t len, float shift, float scale, float* dst);
// exp of one float x <= 0 by the kernels' polynomial (tests compare it with std::exp).
float exp_simd_scalar_check(float x);

// The same kernels for one instruction set, for the dispatcher above and the tests (call only
// when the CPU supports it).
namespace rows_avx2 {
bool max_sum(const float* row, int64_t len, float& max, double& sum);
bool softmax_row(const float* row, int64_t len, float* dst);
void exp_scale(const float* row, int64_t len, float shift, float scale, float* dst);
float exp_one(float x);
}  // namespace rows_avx2
namespace rows_avx512 {
bool max_sum(const float* row, int64_t len, float& max, double& sum);
bool softmax_row(const float* row, int64_t len, float* dst);
void exp_scale(const float* row, int64_t len, float shift, float scale, float* dst);
float exp_one(float x);
}  // namespace rows_avx512

}  // namespace ember::cpu
