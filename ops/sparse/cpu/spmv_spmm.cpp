// SpMV, SpMM and SDDMM: one pass over the CSR arrays, rows split across threads by nonzeros.
#include <algorithm>
#include <type_traits>

#include "ops/sparse/cpu/kernels.h"
#include "ops/sparse/cpu/partition.h"

namespace ember::sparse::cpu {

namespace {
constexpr int64_t kGrain = 1 << 15;  // nonzeros below which a second thread costs more than it saves
}

template <class T>
void spmv(const CsrPattern& a, const T* values, const T* x, T* y) {
  if constexpr (std::is_same_v<T, float>)
    if (spmv_avx512(a, values, x, y)) return;
  const int32_t* rp = a.row_ptr.data();
  const int32_t* ci = a.col_idx.data();
  parallel_rows(rp, a.rows, kGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      int32_t k = rp[i];
      const int32_t e = rp[i + 1];
      // Four partial sums: the loads of x are independent gathers, and one accumulator would
      // serialise them behind the add latency on long rows.
      T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (; k + 4 <= e; k += 4) {
        s0 += values[k] * x[ci[k]];
        s1 += values[k + 1] * x[ci[k + 1]];
        s2 += values[k + 2] * x[ci[k + 2]];
        s3 += values[k + 3] * x[ci[k + 3]];
      }
      for (; k < e; ++k) s0 += values[k] * x[ci[k]];
      y[i] = (s0 + s1) + (s2 + s3);
    }
  });
}

template <class T>
void spmm(const CsrPattern& a, const T* values, const T* b, int64_t ldb, int64_t n, T* c) {
  if (n == 1 && ldb == 1) return spmv(a, values, b, c);
  const int32_t* rp = a.row_ptr.data();
  const int32_t* ci = a.col_idx.data();
  parallel_rows(rp, a.rows, std::max<int64_t>(1, kGrain / std::max<int64_t>(n, 1)), [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      T* crow = c + i * n;
      std::fill(crow, crow + n, T(0));
      for (int32_t k = rp[i]; k < rp[i + 1]; ++k) {
        const T av = values[k];
        const T* brow = b + int64_t(ci[k]) * ldb;
        for (int64_t j = 0; j < n; ++j) crow[j] += av * brow[j];  // unit stride: vectorised
      }
    }
  });
}

template <class T>
void sddmm(const CsrPattern& a, const T* x, int64_t ldx, const T* y, int64_t ldy, int64_t k, T* out) {
  const int32_t* rp = a.row_ptr.data();
  const int32_t* ci = a.col_idx.data();
  parallel_rows(rp, a.rows, std::max<int64_t>(1, kGrain / std::max<int64_t>(k, 1)), [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      const T* xrow = x + i * ldx;
      for (int32_t p = rp[i]; p < rp[i + 1]; ++p) {
        const T* yrow = y + int64_t(ci[p]) * ldy;
        T s = 0;
        for (int64_t j = 0; j < k; ++j) s += xrow[j] * yrow[j];
        out[p] = s;
      }
    }
  });
}

template <class T>
void gather(const T* v, const int32_t* perm, int64_t n, T* out) {
  parallel_for(n, kGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t k = lo; k < hi; ++k) out[k] = v[perm[k]];
  });
}

#define EMBER_INSTANTIATE(T)                                                                     \
  template void spmv<T>(const CsrPattern&, const T*, const T*, T*);                              \
  template void spmm<T>(const CsrPattern&, const T*, const T*, int64_t, int64_t, T*);            \
  template void sddmm<T>(const CsrPattern&, const T*, int64_t, const T*, int64_t, int64_t, T*); \
  template void gather<T>(const T*, const int32_t*, int64_t, T*);
EMBER_INSTANTIATE(float)
EMBER_INSTANTIATE(double)
#undef EMBER_INSTANTIATE

}  // namespace ember::sparse::cpu
