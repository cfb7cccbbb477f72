// The textbook i-j-k triple loop: each C[i][j] is a dot product of a row of A and a column of B.
// Column access to B strides through memory, which is what the blocked and packed kernels fix.
#include "examples/matmul/study/study_kernels.h"

namespace ember::matmul_study {

template <class T>
static void naive(const GemmArgs& g) {
  const T* a = static_cast<const T*>(g.a);
  const T* b = static_cast<const T*>(g.b);
  T* c = static_cast<T*>(g.c);
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j) {
      T acc = 0;
      for (int64_t p = 0; p < g.k; ++p) acc += a[i * g.a_rs + p * g.a_cs] * b[p * g.b_rs + j * g.b_cs];
      c[i * g.c_rs + j] = acc;
    }
}

void gemm_naive(const GemmArgs& g) {
  if (g.dtype == DType::Float32) naive<float>(g);
  else naive<double>(g);
}

}  // namespace ember::matmul_study
