// The register micro-kernel of the packed GEMM: C[MR x NR] (+)= Ap[MR x kc] * Bp[kc x NR], where
// Ap is an MR-row sliver packed k-major (Ap[p*MR + i]) and Bp an NR-column sliver packed k-major
// (Bp[p*NR + j]). The MR x NR block of C lives in vector registers for the whole k loop, so each
// element of A and B loaded from L1/L2 feeds NR resp. MR multiply-adds.
//
// It is written once with GCC vector extensions and instantiated for several vector widths. The
// body is always_inline and carries no target of its own: inlined into a wrapper that has
// __attribute__((target("avx512f,..."))) (see microkernels.cpp) it is compiled to zmm FMAs, into
// one with target("avx2,fma") to ymm FMAs, and into a plain function to SSE2 (or generic) code.
// `acc += a * b` becomes a fused multiply-add under GCC's default -ffp-contract=fast (gnu++17).
#pragma once
#include <cstdint>

namespace ember::cpu::micro {

// A vector of W elements of T that may live at any T-aligned address and alias T (so that
// loads and stores through it are plain dereferences, keeping the accumulators in registers).
template <class T, int W>
struct Vec {
  typedef T type __attribute__((vector_size(W * sizeof(T)), aligned(sizeof(T)), may_alias));
};

// MR rows, NV vectors of W lanes per row: NR = NV * W columns.
template <class T, int W, int MR, int NV>
__attribute__((always_inline)) inline void kernel_body(int64_t kc, const T* __restrict ap, const T* __restrict bp,
                                                       T* __restrict c, int64_t c_rs, bool accumulate) {
  using V = typename Vec<T, W>::type;
  constexpr int NR = NV * W;
  V acc[MR][NV];
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < NV; ++j) acc[i][j] = V{};
    // C is read (or written) only after the k loop: start fetching its lines now.
    for (int j = 0; j < NR * int(sizeof(T)); j += 64) __builtin_prefetch(reinterpret_cast<const char*>(c + i * c_rs) + j, 1);
  }
  for (int64_t p = 0; p < kc; ++p) {
    V b[NV];
    for (int j = 0; j < NV; ++j) b[j] = *reinterpret_cast<const V*>(bp + j * W);
    for (int i = 0; i < MR; ++i) {
      V a = ap[i] - V{};  // broadcast; x - 0 == x exactly, so this folds to one vbroadcast
      for (int j = 0; j < NV; ++j) acc[i][j] += a * b[j];
    }
    ap += MR;
    bp += NR;
  }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV; ++j) {
      V* dst = reinterpret_cast<V*>(c + i * c_rs + j * W);
      *dst = accumulate ? *dst + acc[i][j] : acc[i][j];
    }
}

}  // namespace ember::cpu::micro
