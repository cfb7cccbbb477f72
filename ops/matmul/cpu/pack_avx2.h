// AVX2 packing of a transposed float32 B (B[p, j] at j * b_cs + p: every column contiguous), the
// layout of `x @ w.t()` in linear layers and of GPT-2's tied LM head. The portable packer writes
// one float per store at a stride of NR floats; this one transposes 8 x 8 tiles in registers and
// writes whole rows of the sliver. Call only when the CPU has AVX2 (best_cpu_isa() >= Avx2).
#pragma once
#include <cstdint>

namespace ember::cpu {

// dst[p * nr + j] = b[(j0 + j) * b_cs + p0 + p] for p < kc, j < cols (cols <= nr); the caller
// zeroes columns [cols, nr).
void pack_b_transposed_avx2(const float* b, int64_t b_cs, int64_t p0, int64_t kc, int64_t j0, int64_t cols, int nr,
                            float* dst);

// dst[p * mr + i] = a[i * lda + p] for p < kc, i < rows, and 0 for rows <= i < mr (mr <= 8): an
// A sliver of a row-major A, packed by 8 x 8 register transposes instead of one store per float.
void pack_a_rows_avx2(const float* a, int64_t lda, int64_t rows, int64_t kc, int mr, float* dst);

// dst[p * mr + i] = a[p * lda + i] for p < kc, i < rows, and 0 for rows <= i < mr (mr <= 8): an
// A sliver of a transposed view of A (its columns contiguous), by masked 8-float loads and stores.
void pack_a_cols_avx2(const float* a, int64_t lda, int64_t rows, int64_t kc, int mr, float* dst);

}  // namespace ember::cpu
