// C = A B for products of fewer than kSkinnyRows rows that the stripes do not take (packed.cpp),
// e.g. one token of GPT-2's generation: packing B would copy all of it to use each element fewer
// than four times, so B is streamed from its storage, threads splitting the columns of C.
#include <algorithm>
#include <type_traits>

#include "framework/core/parallel.h"
#include "ops/matmul/cpu/gemv_avx2.h"
#include "ops/matmul/cpu/packed_internal.h"

namespace ember::cpu::packed_gemm {

namespace {
// Columns [lo, hi) of C, one row of A at a time. With rows of B contiguous the inner loop is an
// axpy over a row of B; with columns contiguous (B a transposed view) it is a dot product, summed
// in eight independent partial sums so that it vectorises.
template <class T>
void skinny_columns(const GemmArgs& g, int64_t lo, int64_t hi) {
  const T* a = static_cast<const T*>(g.a);
  const T* b = static_cast<const T*>(g.b);
  T* c = static_cast<T*>(g.c);
  for (int64_t i = 0; i < g.m; ++i) {
    T* crow = c + i * g.c_rs;
    const T* arow = a + i * g.a_rs;
    if (g.b_rs == 1 && g.b_cs != 1) {
      for (int64_t j = lo; j < hi; ++j) {
        const T* bcol = b + j * g.b_cs;
        T part[8] = {};
        int64_t p = 0;
        if (g.a_cs == 1)
          for (; p + 8 <= g.k; p += 8)
            for (int q = 0; q < 8; ++q) part[q] += arow[p + q] * bcol[p + q];
        T acc = 0;
        for (; p < g.k; ++p) acc += arow[p * g.a_cs] * bcol[p];
        for (int q = 0; q < 8; ++q) acc += part[q];
        crow[j] = acc;
      }
      continue;
    }
    std::fill(crow + lo, crow + hi, T(0));
    for (int64_t p = 0; p < g.k; ++p) {
      const T av = arow[p * g.a_cs];
      const T* brow = b + p * g.b_rs;
      if (g.b_cs == 1)
        for (int64_t j = lo; j < hi; ++j) crow[j] += av * brow[j];
      else
        for (int64_t j = lo; j < hi; ++j) crow[j] += av * brow[j * g.b_cs];
    }
  }
}
}  // namespace

template <class T>
void skinny(const GemmArgs& g, CpuIsa isa) {
  const int64_t grain = std::max<int64_t>(kSkinnyMinColumns, kSkinnyTaskMacs / std::max<int64_t>(1, g.m * g.k));
#if defined(__x86_64__) || defined(__i386__)
  // B's columns contiguous (a transposed matrix, as GPT-2's tied LM head x @ wte^T) and A's rows
  // too: the AVX2 dot kernel reads each column of B once for all rows of A, where the loop of
  // skinny_columns reads B once per row.
  if constexpr (std::is_same_v<T, float>) {
    if (isa >= CpuIsa::Avx2 && g.b_rs == 1 && g.a_cs == 1) {
      const float* a = static_cast<const float*>(g.a);
      const float* b = static_cast<const float*>(g.b);
      float* c = static_cast<float*>(g.c);
      parallel_for(g.n, grain, [&](int64_t lo, int64_t hi) {
        gemm_dots_avx2(a, g.a_rs, int(g.m), b + lo * g.b_cs, g.b_cs, g.k, hi - lo, c + lo, g.c_rs);
      });
      return;
    }
  }
#endif
  (void)isa;
  parallel_for(g.n, grain, [&](int64_t lo, int64_t hi) { skinny_columns<T>(g, lo, hi); });
}

template void skinny<float>(const GemmArgs&, CpuIsa);
template void skinny<double>(const GemmArgs&, CpuIsa);

}  // namespace ember::cpu::packed_gemm
