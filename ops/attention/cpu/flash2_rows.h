// The element-wise work of the FlashAttention-2 kernels (flash2.cpp) on a block: the online
// softmax of the forward (down the columns of S^T) and the P / dS recomputation of the backward
// (along a row). They run once per score, as often as a multiply-add of the block products per
// head dimension, so they must run at the vector width of the micro-kernel: each is compiled for
// AVX-512, AVX2 and portable vectors (flash2_rows.cpp); flash2_rows(isa) returns those of an
// instruction set the CPU supports, to go with that set's micro-kernel. Double keeps std::exp.
#pragma once
#include <cstdint>

#include "ops/matmul/cpu/kernels.h"

namespace ember::cpu::attn {

template <class T>
struct Flash2Rows {
  // Forward, on a block of S^T laid out as the micro-kernel's B sliver: s holds `rows` keys x nr
  // queries (row r at s + r * nr; nr a multiple of the vector width), scores already scaled.
  // Query c sees rows [0, lim[c]) (lim == nullptr: all). Per query, with its running max m[c] and
  // sum l[c]: m_new = max(m, its largest visible score), s = exp(s - m_new) in place (0 where not
  // visible), alpha[c] = exp(m - m_new) (0 on its first block), l = alpha l + the block's sum, m = m_new.
  // The float kernels move m lazily: only where the block's largest score exceeds m by more than
  // ln 256 (kLazyMax); elsewhere m stays, alpha is 1 and s = exp(s - m) is at most 256, far from
  // overflow. The result is the same softmax (m cancels in O = acc / l and in lse = m + log l).
  // Returns whether some alpha[c] != 1, i.e. whether the output accumulated so far needs scaling:
  // after the first few blocks it rarely does, and the caller then skips that pass over O.
  bool (*softmax_cols)(T* s, int64_t rows, int64_t nr, const int32_t* lim, T* m, T* l, T* alpha);
  // Backward, one query row of a block of keys (its scores s, its dP in dp), with the row's lse
  // and D = rowsum(dO o O): p = exp(scale s - lse) into s and dS = p (dp - D) into dp for the
  // keys [0, hi) the query sees; both 0 in [hi, nn).
  void (*grad_row)(T* s, T* dp, int64_t hi, int64_t nn, T scale, T lse, T dvec);
};

template <class T>
Flash2Rows<T> flash2_rows(CpuIsa isa);

}  // namespace ember::cpu::attn
