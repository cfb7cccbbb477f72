// Matrix-vector products (m == 1), the shape of every GPT-2 generation step. A GEMM kernel packs
// B before using it, which for one row of A means reading and writing all of B to multiply it
// once; here B is streamed exactly once, in whichever direction it is contiguous.
#include <vector>

#include "framework/core/parallel.h"
#include "ops/matmul/cpu/gemv_avx2.h"
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

#if defined(__x86_64__) || defined(__i386__)
// The float32 hot path, with AVX2 kernels. Threads are given contiguous ranges of B's rows (which
// the kernels read as eight streams each): for row-major B each thread sums its slice of B's rows
// into its own partial c (added up at the end, n floats per extra thread); for transposed B each
// thread takes a range of c, i.e. a range of B's rows.
bool gemv_avx2(const GemmArgs& g) {
  static const bool usable = best_cpu_isa() >= CpuIsa::Avx2;
  if (!usable) return false;
  const float* a = static_cast<const float*>(g.a);
  const float* b = static_cast<const float*>(g.b);
  float* c = static_cast<float*>(g.c);
  const int64_t k = g.k, n = g.n;
  constexpr int64_t kWorthAThread = int64_t(1) << 16;  // elements of B (256 KiB) per thread at least
  if (g.b_cs == 1) {
    const int64_t parts = std::max<int64_t>(1, std::min<int64_t>({num_threads(), k, k * n / kWorthAThread}));
    if (parts == 1) {
      gemv_rows_avx2(a, g.a_cs, b, g.b_rs, k, n, c);
      return true;
    }
    std::vector<float> partial(size_t((parts - 1) * n));
    parallel_for(parts, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t t = lo; t < hi; ++t) {
        int64_t p0 = k * t / parts, p1 = k * (t + 1) / parts;
        gemv_rows_avx2(a + p0 * g.a_cs, g.a_cs, b + p0 * g.b_rs, g.b_rs, p1 - p0, n,
                       t == 0 ? c : partial.data() + (t - 1) * n);
      }
    });
    for (int64_t t = 1; t < parts; ++t) add_into_avx2(c, partial.data() + (t - 1) * n, n);
    return true;
  }
  if (g.b_rs == 1 && g.a_cs == 1) {
    parallel_for(n, std::max<int64_t>(1, kWorthAThread / std::max<int64_t>(k, 1)),
                 [&](int64_t lo, int64_t hi) { gemv_dots_avx2(a, b + lo * g.b_cs, g.b_cs, k, hi - lo, c + lo); });
    return true;
  }
  return false;
}
#endif

}  // namespace

void gemv(const GemmArgs& g) {
#if defined(__x86_64__) || defined(__i386__)
  if (g.dtype == DType::Float32 && gemv_avx2(g)) return;
#endif
  if (g.dtype == DType::Float32) gemv_impl<float>(g);
  else gemv_impl<double>(g);
}

}  // namespace ember::cpu
