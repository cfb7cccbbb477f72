// The element-wise work of the FlashAttention-2 kernels (flash2.cpp) on one row of a block: the
// online softmax of the forward and the P / dS recomputation of the backward. They run once per
// score, as often as a multiply-add of the block products per head dimension, so they must run at
// the vector width of the micro-kernel: each is compiled for AVX-512, AVX2 and portable vectors
// (flash2_rows.cpp) and flash2_rows() returns the best this CPU supports. Double keeps std::exp.
#pragma once
#include <cstdint>

namespace ember::cpu::attn {

template <class T>
struct Flash2Rows {
  // Forward: s[0, jmax) *= scale, m_new = max(m_old, max s), then s = exp(s - m_new) in place and
  // *sum = its sum; s[jmax, nn) = 0 (masked or padding columns).
  void (*softmax_row)(T* s, int64_t jmax, int64_t nn, T scale, T m_old, T* m_new, T* sum);
  // Backward, one key against a block of queries: p = exp(scale s - L) into s and dS = p (dp - D)
  // into dp for the columns [lo, hi) this key is visible to; both 0 elsewhere in [0, nn).
  void (*grad_row)(T* s, T* dp, int64_t lo, int64_t hi, int64_t nn, T scale, const T* lse, const T* dvec);
};

template <class T>
const Flash2Rows<T>& flash2_rows();

}  // namespace ember::cpu::attn
