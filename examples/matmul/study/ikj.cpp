// i-k-j order: the inner loop streams a row of B into a row of C, unit stride on both when B is
// row-major, so the compiler vectorises it. Rows of C are split across threads.
#include "framework/core/parallel.h"
#include "examples/matmul/study/study_kernels.h"

namespace ember::matmul_study {

template <class T>
static void ikj(const GemmArgs& g) {
  const T* a = static_cast<const T*>(g.a);
  const T* b = static_cast<const T*>(g.b);
  T* c = static_cast<T*>(g.c);
  parallel_for(g.m, std::max<int64_t>(1, 65536 / std::max<int64_t>(1, g.n * g.k)), [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      T* crow = c + i * g.c_rs;
      for (int64_t j = 0; j < g.n; ++j) crow[j] = 0;
      for (int64_t p = 0; p < g.k; ++p) {
        T av = a[i * g.a_rs + p * g.a_cs];
        const T* brow = b + p * g.b_rs;
        if (g.b_cs == 1)
          for (int64_t j = 0; j < g.n; ++j) crow[j] += av * brow[j];
        else
          for (int64_t j = 0; j < g.n; ++j) crow[j] += av * brow[j * g.b_cs];
      }
    }
  });
}

void gemm_ikj(const GemmArgs& g) {
  if (g.dtype == DType::Float32) ikj<float>(g);
  else ikj<double>(g);
}

}  // namespace ember::matmul_study
