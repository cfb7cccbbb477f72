// The two rules every attention kernel shares, CPU and CUDA alike, written once as EMBER_HD
// functions: which keys a query sees under the causal mask, and the online softmax's update of a
// row's running max m and running sum l when one more block of scores arrives. The CPU kernels
// (cpu/flash2.cpp, cpu/decode.cpp, the study's Algorithms 0 and 1 in examples/attention/study/),
// the composite formula (composite.cpp) and the CUDA kernels (cuda/flash_kernel.h) all call these,
// so a change to the mask or to the softmax's bookkeeping is made in one place.
#pragma once
#include <cmath>
#include <cstdint>

#include "framework/core/host_device.h"

namespace ember::attention_math {

template <class T>
EMBER_HD inline T exp_of(T x) {
#ifdef __CUDA_ARCH__
  return exp(x);
#else
  return std::exp(x);
#endif
}
template <class T>
EMBER_HD inline T log_of(T x) {
#ifdef __CUDA_ARCH__
  return log(x);
#else
  return std::log(x);
#endif
}

// ---- the causal mask, aligned bottom-right as with a KV cache: query i of nq sees the keys
// j <= i + (nk - nq) of nk (every query sees at least one key when nk >= nq) ----

EMBER_HD inline int64_t causal_offset(int64_t nq, int64_t nk) { return nk - nq; }

// Keys [0, visible_keys) are visible to query i (all nk without the mask), clamped to [0, nk].
EMBER_HD inline int64_t visible_keys(int64_t i, int64_t nq, int64_t nk, bool causal) {
  if (!causal) return nk;
  const int64_t v = i + causal_offset(nq, nk) + 1;
  return v < 0 ? 0 : (v > nk ? nk : v);
}

EMBER_HD inline bool key_visible(int64_t i, int64_t j, int64_t nq, int64_t nk, bool causal) {
  return j < visible_keys(i, nq, nk, causal);
}

// The first query that sees key j (0 without the mask): every earlier query skips it.
EMBER_HD inline int64_t first_query_seeing(int64_t j, int64_t nq, int64_t nk, bool causal) {
  if (!causal) return 0;
  const int64_t i = j - causal_offset(nq, nk);
  return i < 0 ? 0 : i;
}

// ---- the online softmax of one query row over blocks of keys. The row starts at m = -inf,
// l = 0. For each block: m_new = online_max(m, the block's largest score); the block's
// probabilities are exp(s - m_new), summing to block_sum; online_update folds them in and returns
// alpha = exp(m - m_new), the factor by which the row's output accumulated so far must be scaled
// (0 on the first block, where m = -inf). At the end O = acc / l and L = online_lse(m, l). ----

template <class T>
EMBER_HD inline T online_max(T m, T block_max) {
  return m < block_max ? block_max : m;
}

template <class T>
EMBER_HD inline T online_update(T& m, T& l, T m_new, T block_sum) {
  const T alpha = exp_of(m - m_new);
  l = alpha * l + block_sum;
  m = m_new;
  return alpha;
}

// The row's log-sum-exp log(sum_j exp(s_j)) = m + log(l), which the backward recomputes P from.
template <class T>
EMBER_HD inline T online_lse(T m, T l) {
  return m + log_of(l);
}

}  // namespace ember::attention_math
