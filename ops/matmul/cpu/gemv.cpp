// Matrix-vector products (m == 1), the shape of every GPT-2 generation step. A GEMM kernel packs
// B before using it, which for one row of A means reading and writing all of B to multiply it
// once; here B is streamed exactly once, in whichever direction it is contiguous.
#include "framework/parallel.h"
#include "ops/matmul/cpu/kernels.h"

namespace ember::cpu {
namespace {

template <class T>
void gemv_impl(const GemmArgs& g) {
  const T* a = static_cast<const T*>(g.a);
  const T* b = static_cast<const T*>(g.b);
  T* c = static_cast<T*>(g.c);
  const int64_t k = g.k, n = g.n;
  if (g.b_cs == 1) {
    // B row-major (k x n): c += a[p] * B[p, :], each thread owning a block of columns of c.
    parallel_for(n, std::max<int64_t>(64, (1 << 16) / std::max<int64_t>(k, 1)), [&](int64_t lo, int64_t hi) {
      T* cc = c + lo;
      for (int64_t j = 0; j < hi - lo; ++j) cc[j] = T(0);
      for (int64_t p = 0; p < k; ++p) {
        const T av = a[p * g.a_cs];
        const T* row = b + p * g.b_rs + lo;
#pragma omp simd
        for (int64_t j = 0; j < hi - lo; ++j) cc[j] += av * row[j];
      }
    });
    return;
  }
  // B stored transposed (B[p, j] at j * b_cs + p when b_rs == 1): each c[j] is a dot product of a
  // with a contiguous row; otherwise the same dot product with strides.
  parallel_for(n, std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(k, 1)), [&](int64_t lo, int64_t hi) {
    for (int64_t j = lo; j < hi; ++j) {
      const T* col = b + j * g.b_cs;
      T acc = T(0);
      if (g.b_rs == 1 && g.a_cs == 1) {
#pragma omp simd reduction(+ : acc)
        for (int64_t p = 0; p < k; ++p) acc += a[p] * col[p];
      } else {
        for (int64_t p = 0; p < k; ++p) acc += a[p * g.a_cs] * col[p * g.b_rs];
      }
      c[j] = acc;
    }
  });
}

}  // namespace

void gemv(const GemmArgs& g) {
  if (g.dtype == DType::Float32) gemv_impl<float>(g);
  else gemv_impl<double>(g);
}

}  // namespace ember::cpu
