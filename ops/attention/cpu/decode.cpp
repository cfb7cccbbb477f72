// A generation step on the CPU: a few queries (one per step, up to kFewRows with speculative or
// chunked decoding) against a long KV cache. Packing K and V for FlashAttention-2's micro-kernel
// would copy the whole cache for a few rows of work, so this kernel reads K and V in place: per
// batch*head, key blocks of a few KiB (decode_key_block; Algorithm 1's Bc where the caller gives a
// budget M), the scores as dot products of each query with K's rows, the online softmax
// (attention_math.h), and O += P V_j.
// O and the row statistics stay in the task's own memory; O is normalised once at the end.
#include <algorithm>
#include <limits>

#include "framework/core/parallel.h"
#include "framework/core/tensor.h"
#include "ops/attention/cpu/kernels.h"
#include "ops/attention/cpu/tile_math.h"

namespace ember::cpu::attn {

template <class T>
void decode_forward(const Problem<T>& pr, const T* q, const T* k, const T* v, T* o, T* lse) {
  const int64_t d = pr.d, nq = pr.nq, bc = pr.decode_bc;
  EMBER_CHECK(nq < kFewRows, "attention (decode): ", nq, " queries, expected fewer than ", kFewRows);
  // The work estimate is a whole row block's (Br rows), as Algorithm 1's kernel made it when it
  // served this path: a step's heads then spread over the threads as they did then.
  parallel_for(pr.bh, task_grain(4 * pr.br * pr.nk * d), [&](int64_t b, int64_t e) {
    Tensor scratch = empty({kFewRows * bc}, dtype_of<T>::value);
    T* s = scratch.data<T>();
    T m[kFewRows], l[kFewRows];
    for (int64_t h = b; h < e; ++h) {
      const T* qh = q + h * nq * d;
      const T* kh = k + h * pr.kv_stride();
      const T* vh = v + h * pr.kv_stride();
      T* oh = o + h * nq * d;
      std::fill(oh, oh + nq * d, T(0));
      std::fill(m, m + nq, -std::numeric_limits<T>::infinity());
      std::fill(l, l + nq, T(0));
      const int64_t vis = pr.visible(nq - 1);  // keys past this are masked for every query
      for (int64_t j0 = 0; j0 < vis; j0 += bc) {
        const int64_t n = std::min(bc, vis - j0);
        gemm_a_bt_rows(nq, n, d, pr.scale, qh, d, kh + j0 * d, d, s, bc);
        for (int64_t r = 0; r < nq; ++r) {
          T* srow = s + r * bc;
          const int64_t jmax = std::clamp<int64_t>(pr.visible(r) - j0, 0, n);
          if (jmax == 0) {  // this query sees none of the block: it adds nothing
            std::fill(srow, srow + n, T(0));
            continue;
          }
          T mx = srow[0];
          for (int64_t j = 1; j < jmax; ++j) mx = std::max(mx, srow[j]);
          const T m_new = attention_math::online_max(m[r], mx);
          exp_shifted(srow, srow, jmax, m_new);
          T sum = 0;
          for (int64_t j = 0; j < jmax; ++j) sum += srow[j];
          std::fill(srow + jmax, srow + n, T(0));
          const T alpha = attention_math::online_update(m[r], l[r], m_new, sum);
          T* orow = oh + r * d;
          for (int64_t c = 0; c < d; ++c) orow[c] *= alpha;
        }
        gemm_acc_ab(nq, d, n, T(1), s, bc, vh + j0 * d, d, oh, d);
      }
      for (int64_t r = 0; r < nq; ++r) {
        const T inv = T(1) / l[r];
        for (int64_t c = 0; c < d; ++c) oh[r * d + c] *= inv;
        lse[h * nq + r] = attention_math::online_lse(m[r], l[r]);
      }
    }
  });
}

template void decode_forward<float>(const Problem<float>&, const float*, const float*, const float*, float*, float*);
template void decode_forward<double>(const Problem<double>&, const double*, const double*, const double*, double*,
                                     double*);

}  // namespace ember::cpu::attn
