// Float32 matrix-vector kernels with AVX2+FMA (x86 only; call them when best_cpu_isa() >= Avx2).
#pragma once
#include <cstdint>

namespace ember::cpu {

// How many rows of B the kernels below read side by side on this CPU (4 or 8), detected once: the
// number that kept the most of the memory bandwidth busy where it was measured.
int gemv_streams();
// c[0, w) = a . B for B row-major with row stride ldb (k rows, w columns read); a strided by a_stride.
// `streams` rows of B at a time (4 or 8: any value up to 4 reads 4, above it 8), k / streams apart.
void gemv_rows_avx2(const float* a, int64_t a_stride, const float* b, int64_t ldb, int64_t k, int64_t w, float* c,
                    int streams = gemv_streams());
// c[j] = dot(a[0, k), b + j * ldb) for j in [0, n): B's columns stored as contiguous rows; a contiguous.
// `streams` rows at a time (4 or 8), n / streams rows apart.
void gemv_dots_avx2(const float* a, const float* b, int64_t ldb, int64_t k, int64_t n, float* c,
                    int streams = gemv_streams());
// C = A B^T for 1 to 3 rows of A (row i at a + i * a_rs, contiguous) and B's n columns stored as
// contiguous rows (b + j * ldb): c[i * c_rs + j] = dot(A_i, B_j). Each row of B is read once for
// all rows of A, four rows of B at a time, n / 4 rows apart.
void gemm_dots_avx2(const float* a, int64_t a_rs, int rows, const float* b, int64_t ldb, int64_t k, int64_t n,
                    float* c, int64_t c_rs);
// c[0, n) += x[0, n): sums the per-thread partial results of gemv_rows_avx2.
void add_into_avx2(float* c, const float* x, int64_t n);

}  // namespace ember::cpu
