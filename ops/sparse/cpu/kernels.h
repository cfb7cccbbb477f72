// CPU kernels for CSR matrices, on raw arrays (not recorded by autograd). T is float or double.
// Each is multi-threaded over rows, with rows split so that every thread gets about the same
// number of nonzeros (see partition.h), not the same number of rows.
#pragma once
#include <cstdint>
#include <vector>

#include "ops/sparse/csr.h"

namespace ember::sparse::cpu {

// y[rows] = A x[cols]
template <class T>
void spmv(const CsrPattern& a, const T* values, const T* x, T* y);

// C[rows x n] = A B, B[cols x n] with row stride ldb (unit column stride), C contiguous.
template <class T>
void spmm(const CsrPattern& a, const T* values, const T* b, int64_t ldb, int64_t n, T* c);

// The same for float32 with AVX-512 gathers (16 nonzeros per instruction, masked tails), when the
// CPU has AVX-512F; spmv<float> calls it by itself when it can. Returns false where unsupported.
bool spmv_avx512(const CsrPattern& a, const float* values, const float* x, float* y);

// Sampled dense-dense product: out[p] = dot(X[row(p), :], Y[col(p), :]) over k columns, for every
// nonzero p of the pattern; X and Y row-major with row strides ldx, ldy. It is the VJP of spmm
// with respect to the sparse values.
template <class T>
void sddmm(const CsrPattern& a, const T* x, int64_t ldx, const T* y, int64_t ldy, int64_t k, T* out);

// What one SpGEMM spent where (milliseconds), for the benchmark's phase profile.
struct SpgemmProfile {
  double work_ms = 0;      // products per row of C (to balance threads)
  double symbolic_ms = 0;  // nonzeros per row of C (marker array)
  double scan_ms = 0;      // prefix sum -> C's row pointers
  double alloc_ms = 0;     // C's column and value arrays
  double numeric_ms = 0;   // dense accumulator, then each row's columns sorted
  double compact_ms = 0;   // one-pass mode: the rows moved from their upper-bound slots into C
  int64_t products = 0;    // multiply-adds performed
  bool one_pass = false;   // no symbolic pass: rows written to upper-bound slots, then moved
};

// SpGEMM skips the symbolic pass when the upper bounds of C's rows, min(products, cols) each, add
// up to at most this many entries: the numeric pass writes each row into a slot of that size,
// then the rows are moved together. The slots cost (4 + sizeof(T)) bytes an entry, at most 64 MiB
// for float here.
constexpr int64_t kSpgemmOnePassSlots = int64_t(1) << 23;

// C = A B by Gustavson's row-wise algorithm: a symbolic pass counts each row's nonzeros, a prefix
// sum places the rows, a numeric pass accumulates each row in a dense per-thread accumulator and
// writes it with sorted columns. Structural zeros (exact cancellations) are kept. Up to
// `one_pass_slots` slot entries the symbolic pass is skipped (see kSpgemmOnePassSlots); both
// modes give the same C, bit for bit.
// C's values come back as a 1-d Tensor of T (from the caching allocator, like every tensor).
template <class T>
void spgemm(const CsrPattern& a, const T* av, const CsrPattern& b, const T* bv, CsrPattern& c, Tensor& cv,
            SpgemmProfile* profile = nullptr, int64_t one_pass_slots = kSpgemmOnePassSlots);

// out[k] = v[perm[k]]
template <class T>
void gather(const T* v, const int32_t* perm, int64_t n, T* out);

// The nonzeros of a row-major dense matrix, in CSR order (two parallel passes: count, fill).
template <class T>
void dense_to_csr(const T* dense, int64_t rows, int64_t cols, CsrPattern& out, Tensor& values);

}  // namespace ember::sparse::cpu
