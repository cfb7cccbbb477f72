// The block algorithm: C is split into bm x bn blocks and k into bk-long slices. For one block of
// C and one slice, the inner loops touch a bm x bk block of A, a bk x bn block of B and the bm x bn
// block of C; with the defaults (m, n, k) = (64, 256, 128) that is 32 + 128 + 64 KiB of float32,
// which fits in L2, so every element brought from memory is reused about bm (for B) or bn (for A)
// times instead of once per row. Inside a block the loops run i-k-j so that the innermost loop
// streams rows of B and C with unit stride, which the compiler vectorises. Threads take whole row
// blocks of C.
#include <algorithm>

#include "framework/core/parallel.h"
#include "examples/matmul/study/study_kernels.h"

namespace ember::matmul_study {

template <class T>
static void blocked(const GemmArgs& g, int64_t bm, int64_t bn, int64_t bk) {
  const T* a = static_cast<const T*>(g.a);
  const T* b = static_cast<const T*>(g.b);
  T* c = static_cast<T*>(g.c);
  int64_t mblocks = (g.m + bm - 1) / bm;
  int64_t grain = std::max<int64_t>(1, 262144 / std::max<int64_t>(1, bm * g.n * g.k));
  parallel_for(mblocks, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t ib = lo; ib < hi; ++ib) {
      int64_t i0 = ib * bm, i1 = std::min(g.m, i0 + bm);
      for (int64_t i = i0; i < i1; ++i) std::fill(c + i * g.c_rs, c + i * g.c_rs + g.n, T(0));
      for (int64_t j0 = 0; j0 < g.n; j0 += bn) {
        int64_t j1 = std::min(g.n, j0 + bn);
        for (int64_t p0 = 0; p0 < g.k; p0 += bk) {
          int64_t p1 = std::min(g.k, p0 + bk);
          for (int64_t i = i0; i < i1; ++i) {
            T* crow = c + i * g.c_rs;
            for (int64_t p = p0; p < p1; ++p) {
              T av = a[i * g.a_rs + p * g.a_cs];
              const T* brow = b + p * g.b_rs;
              if (g.b_cs == 1)
                for (int64_t j = j0; j < j1; ++j) crow[j] += av * brow[j];
              else
                for (int64_t j = j0; j < j1; ++j) crow[j] += av * brow[j * g.b_cs];
            }
          }
        }
      }
    }
  });
}

namespace {
void check(const BlockSizes& b) {
  EMBER_CHECK(b.m > 0 && b.n > 0 && b.k > 0, "matmul: blocked variant needs positive block sizes, got block_m=", b.m,
              " block_n=", b.n, " block_k=", b.k);
}
}  // namespace

void gemm_blocked(const GemmArgs& g, const BlockSizes& b) {
  check(b);
  if (g.dtype == DType::Float32) blocked<float>(g, b.m, b.n, b.k);
  else blocked<double>(g, b.m, b.n, b.k);
}

void register_blocked_matmul(const std::string& name, const BlockSizes& b) {
  check(b);  // here, not at the first product
  register_matmul_variant(name, [b](const GemmArgs& g) { gemm_blocked(g, b); });
}

}  // namespace ember::matmul_study
