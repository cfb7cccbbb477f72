// Algorithm 1 (FlashAttention) on the CPU, in the paper's loop order: the outer loop loads a block
// K_j, V_j of Bc keys into the working set, the inner loop visits the row blocks Q_i (Br rows),
// reading O_i, m_i, l_i from main memory and writing them back updated. K and V are read once per
// task, Q and O once per column block: Theta(N^2 d / Bc) = Theta(N^2 d^2 / M) accesses. A task is
// one batch*head and a range of its row blocks (all of them when there are at least as many heads
// as threads). The working set (K_j^T, V_j, S_ij / P_ij, Q_i, O_i) is about M floats: the L2 cache
// plays the paper's on-chip SRAM. The backward (below) has the same outer loop over K_j, V_j.
#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

#include "framework/core/parallel.h"
#include "framework/core/tensor.h"
#include "examples/attention/study/io_counters.h"
#include "examples/attention/study/study_kernels.h"
#include "ops/attention/cpu/tile_math.h"

namespace ember::attention_study {

using namespace cpu::attn;  // Problem, task_grain, kFewRows, rowdot, the tile products

using detail::count_read;
using detail::count_write;

template <class T>
int64_t flash_row_blocks_per_task(const Problem<T>& pr) {
  const int64_t tr = (pr.nq + pr.br - 1) / pr.br;
  const int64_t flops = 4 * pr.nq * pr.nk * pr.d;  // of one batch*head
  int64_t threads = std::min<int64_t>(num_threads(), std::max<int64_t>(1, flops / (int64_t(1) << 18)));
  if (pr.bh >= threads) return tr;                     // a whole head per task: K and V read once
  const int64_t tasks_per_head = (threads + pr.bh - 1) / pr.bh;  // split heads so every thread has work
  return (tr + tasks_per_head - 1) / tasks_per_head;
}

template <class T>
void flash_forward(const Problem<T>& pr, const T* q, const T* k, const T* v, T* o, T* lse) {
  const int64_t d = pr.d, nq = pr.nq, nk = pr.nk, br = pr.br, bc = pr.bc, E = sizeof(T);
  const int64_t tr = (nq + br - 1) / br, per = flash_row_blocks_per_task(pr), chunks = (tr + per - 1) / per;
  const T neg_inf = -std::numeric_limits<T>::infinity();
  // The running statistics m and l: main-memory vectors of N, as in the paper.
  Tensor stats = empty({2 * pr.bh * nq}, dtype_of<T>::value);
  T* mvec = stats.data<T>();
  T* lvec = mvec + pr.bh * nq;
  parallel_for(pr.bh * chunks, task_grain(4 * per * br * nk * d), [&](int64_t b, int64_t e) {
    Tensor scratch = empty({d * bc + br * bc}, dtype_of<T>::value);
    T* kt = scratch.data<T>();
    T* s = kt + d * bc;
    for (int64_t t = b; t < e; ++t) {
      const int64_t bh = t / chunks, r0 = (t % chunks) * per * br, r1 = std::min(nq, r0 + per * br);
      T* ob = o + bh * nq * d;
      T* mb = mvec + bh * nq;
      T* lb = lvec + bh * nq;
      // Line 2 of Algorithm 1: O = 0, l = 0, m = -inf in main memory.
      std::fill(ob + r0 * d, ob + r1 * d, T(0));
      std::fill(mb + r0, mb + r1, neg_inf);
      std::fill(lb + r0, lb + r1, T(0));
      count_write((r1 - r0) * (d + 2), E);
      const int64_t vis = pr.visible(r1 - 1);  // column blocks past this are masked for every row here
      for (int64_t j0 = 0; j0 < vis; j0 += bc) {
        const int64_t n = std::min(bc, vis - j0);
        const T* vj = v + bh * pr.kv_stride() + j0 * d;
        const T* kj = k + bh * pr.kv_stride() + j0 * d;
        const bool few = r1 - r0 < kFewRows;  // decoding: dot products against K's rows in place
        if (!few) transpose_into(n, d, kj, d, kt);
        count_read(2 * n * d, E);  // K_j and V_j
        // Row blocks whose last row is left of column j0's diagonal see nothing of this block.
        int64_t first = r0;
        if (pr.causal) first = std::max(r0, r0 + ((j0 - pr.causal_offset() - r0) / br) * br);
        for (int64_t i0 = first; i0 < r1; i0 += br) {
          const int64_t m = std::min(br, r1 - i0);
          T* oi = ob + i0 * d;
          count_read(2 * m * d + 2 * m, E);  // Q_i, O_i, m_i, l_i
          if (few) gemm_a_bt_rows(m, n, d, pr.scale, q + (bh * nq + i0) * d, d, kj, d, s, bc);
          else gemm_a_bt(m, n, d, pr.scale, q + (bh * nq + i0) * d, d, kt, s, bc);
          for (int64_t r = 0; r < m; ++r) {
            T* srow = s + r * bc;
            const int64_t jmax = std::clamp<int64_t>(pr.visible(i0 + r) - j0, 0, n);
            if (jmax == 0) {  // this row sees none of the block: contributes nothing
              std::fill(srow, srow + n, T(0));
              continue;
            }
            T mx = srow[0];
            for (int64_t j = 1; j < jmax; ++j) mx = std::max(mx, srow[j]);
            const T m_new = attention_math::online_max(mb[i0 + r], mx);
            exp_shifted(srow, srow, jmax, m_new);
            T sum = 0;
            for (int64_t j = 0; j < jmax; ++j) sum += srow[j];
            std::fill(srow + jmax, srow + n, T(0));
            // m_i, l_i updated; alpha is 0 on the first block (m = -inf).
            const T alpha = attention_math::online_update(mb[i0 + r], lb[i0 + r], m_new, sum);
            T* orow = oi + r * d;
            for (int64_t c = 0; c < d; ++c) orow[c] *= alpha;
          }
          // O_i stays unnormalised (diag(l)^-1 is applied once at the end, not at every step as in
          // the paper's line 12; the same arithmetic, one division per element instead of Tc).
          gemm_acc_ab(m, d, n, T(1), s, bc, vj, d, oi, d);
          count_write(m * d + 2 * m, E);  // O_i, m_i, l_i
        }
      }
      for (int64_t r = r0; r < r1; ++r) {
        const T inv = T(1) / lb[r];
        for (int64_t c = 0; c < d; ++c) ob[r * d + c] *= inv;
        lse[bh * nq + r] = attention_math::online_lse(mb[r], lb[r]);
      }
      count_read((r1 - r0) * (d + 2), E);
      count_write((r1 - r0) * (d + 1), E);
    }
  });
}

template <class T>
void flash_backward(const Problem<T>& pr, const T* q, const T* k, const T* v, const T* o, const T* lse,
                    const T* dout, T* dq, T* dk, T* dv) {
  const int64_t d = pr.d, nq = pr.nq, nk = pr.nk, br = pr.br, bc = pr.bc, E = sizeof(T);
  Tensor dvec_t = empty({pr.bh * nq}, dtype_of<T>::value);
  T* dvec = dvec_t.data<T>();
  rowdot(pr.bh * nq, d, dout, o, dvec);
  count_read(2 * pr.bh * nq * d, E);  // rowdot's reads and writes
  count_write(pr.bh * nq, E);
  std::fill(dq, dq + pr.bh * nq * d, T(0));

  const int64_t tc = (nk + bc - 1) / bc;
  std::mutex dq_mutex;
  parallel_for(pr.bh * tc, task_grain(8 * bc * nq * d), [&](int64_t b, int64_t e) {
    // Working set: K_j^T, V_j^T, P_ij, dP_ij / dS_ij, dK_j, dV_j. dQ for the current batch-head is
    // accumulated in this thread's own N x d buffer (main memory, linear in N) and added to the
    // shared dQ under a lock when the thread moves on: column blocks of one head, handled by different
    // threads, all add into the same rows of dQ (the paper's Algorithm 2 writes dQ_i back to HBM).
    Tensor scratch = empty({2 * d * bc + 2 * br * bc + 2 * bc * d + nq * d}, dtype_of<T>::value);
    T* kt = scratch.data<T>();
    T* vt = kt + d * bc;
    T* pt = vt + d * bc;
    T* dst = pt + br * bc;
    T* dkacc = dst + br * bc;
    T* dvacc = dkacc + bc * d;
    T* dqpriv = dvacc + bc * d;
    int64_t cur_bh = -1, lo = nq;
    auto flush = [&] {
      if (cur_bh < 0 || lo >= nq) return;
      std::lock_guard<std::mutex> lock(dq_mutex);
      T* dst_rows = dq + (cur_bh * nq + lo) * d;
      const T* src = dqpriv + lo * d;
      for (int64_t x = 0; x < (nq - lo) * d; ++x) dst_rows[x] += src[x];
      count_read(2 * (nq - lo) * d, E);
      count_write((nq - lo) * d, E);
    };
    for (int64_t t = b; t < e; ++t) {
      const int64_t bh = t / tc, j0 = (t % tc) * bc, n = std::min(bc, nk - j0);
      if (bh != cur_bh) {
        flush();
        std::fill(dqpriv, dqpriv + nq * d, T(0));
        cur_bh = bh;
        lo = nq;
      }
      const T* kb = k + (bh * nk + j0) * d;
      const T* vb = v + (bh * nk + j0) * d;
      transpose_into(n, d, kb, d, kt);
      transpose_into(n, d, vb, d, vt);
      count_read(2 * n * d, E);
      std::fill(dkacc, dkacc + n * d, T(0));
      std::fill(dvacc, dvacc + n * d, T(0));
      // Row blocks that end before any row can see column j0 are skipped (causal).
      const int64_t i_first = pr.first_query(j0);
      for (int64_t i0 = (i_first / br) * br; i0 < nq; i0 += br) {
        const int64_t m = std::min(br, nq - i0);
        const T* qb = q + (bh * nq + i0) * d;
        const T* dob = dout + (bh * nq + i0) * d;
        const T* lb = lse + bh * nq + i0;
        const T* db = dvec + bh * nq + i0;
        count_read(2 * m * d + 2 * m, E);  // Q_i, dO_i, L_i, D_i
        // Recompute P_ij = exp(scale Q_i K_j^T - L_i) (masked entries 0).
        gemm_a_bt(m, n, d, pr.scale, qb, d, kt, pt, bc);
        for (int64_t r = 0; r < m; ++r) {
          T* prow = pt + r * bc;
          const int64_t jmax = std::clamp<int64_t>(pr.visible(i0 + r) - j0, 0, n);
          exp_shifted(prow, prow, jmax, lb[r]);
          std::fill(prow + jmax, prow + n, T(0));
        }
        gemm_acc_atb(n, d, m, T(1), pt, bc, dob, d, dvacc, d);  // dV_j += P^T dO_i
        gemm_a_bt(m, n, d, T(1), dob, d, vt, dst, bc);          // dP = dO_i V_j^T
        for (int64_t r = 0; r < m; ++r)
          for (int64_t j = 0; j < n; ++j) dst[r * bc + j] = pt[r * bc + j] * (dst[r * bc + j] - db[r]);
        gemm_acc_ab(m, d, n, pr.scale, dst, bc, kb, d, dqpriv + i0 * d, d);  // dQ_i += scale dS K_j
        count_read(m * d, E);
        count_write(m * d, E);
        lo = std::min(lo, i0);
        gemm_acc_atb(n, d, m, pr.scale, dst, bc, qb, d, dkacc, d);  // dK_j += scale dS^T Q_i
      }
      std::copy(dkacc, dkacc + n * d, dk + (bh * nk + j0) * d);
      std::copy(dvacc, dvacc + n * d, dv + (bh * nk + j0) * d);
      count_write(2 * n * d, E);
    }
    flush();
  });
}

#define EMBER_INSTANTIATE(T)                                                                          \
  template int64_t flash_row_blocks_per_task<T>(const Problem<T>&);                                   \
  template void flash_forward<T>(const Problem<T>&, const T*, const T*, const T*, T*, T*);           \
  template void flash_backward<T>(const Problem<T>&, const T*, const T*, const T*, const T*, const T*, \
                                  const T*, T*, T*, T*);
EMBER_INSTANTIATE(float)
EMBER_INSTANTIATE(double)
#undef EMBER_INSTANTIATE

}  // namespace ember::attention_study
