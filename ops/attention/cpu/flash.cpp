// Algorithm 1 (FlashAttention) on the CPU. A task is one (batch*head, row block) for the forward and
// one (batch*head, column block) for the backward; each holds its blocks of Q, K, V (and dO, dK, dV)
// in a per-thread working set of about M floats, the "on-chip" memory that the L2 cache plays here.
// The loop over column blocks runs inside a row block (the order FlashAttention-2 uses), so O_i, m_i
// and l_i stay in the working set instead of being written back after every column block as in the
// paper's Algorithm 1; the arithmetic per (row block, column block) pair is the paper's.
#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

#include "framework/parallel.h"
#include "framework/tensor.h"
#include "ops/attention/cpu/kernels.h"
#include "ops/attention/cpu/tile_math.h"
#include "ops/attention/io_counters.h"

namespace ember::cpu::attn {

using detail::count_read;
using detail::count_write;

template <class T>
void flash_forward(const Problem<T>& pr, const T* q, const T* k, const T* v, T* o, T* lse) {
  const int64_t d = pr.d, nq = pr.nq, nk = pr.nk, br = pr.br, bc = pr.bc, E = sizeof(T);
  const int64_t tr = (nq + br - 1) / br;
  const T neg_inf = -std::numeric_limits<T>::infinity();
  parallel_for(pr.bh * tr, task_grain(4 * br * nk * d), [&](int64_t b, int64_t e) {
    // The working set: K_j^T, S_ij / P_ij, O_i (unnormalised), m_i, l_i.
    Tensor scratch = empty({d * bc + br * bc + br * d + 2 * br}, dtype_of<T>::value);
    T* kt = scratch.data<T>();
    T* s = kt + d * bc;
    T* acc = s + br * bc;
    T* mrow = acc + br * d;
    T* lrow = mrow + br;
    for (int64_t t = b; t < e; ++t) {
      const int64_t bh = t / tr, i0 = (t % tr) * br, m = std::min(br, nq - i0);
      const T* qb = q + (bh * nq + i0) * d;
      const T* kb = k + bh * nk * d;
      const T* vb = v + bh * nk * d;
      const int64_t vis = pr.visible(i0 + m - 1);  // column blocks past this are fully masked: skipped
      count_read(m * d, E);
      std::fill(acc, acc + m * d, T(0));
      std::fill(mrow, mrow + m, neg_inf);
      std::fill(lrow, lrow + m, T(0));
      for (int64_t j0 = 0; j0 < vis; j0 += bc) {
        const int64_t n = std::min(bc, vis - j0);
        transpose_into(n, d, kb + j0 * d, d, kt);
        count_read(2 * n * d, E);  // K_j and V_j
        gemm_a_bt(m, n, d, pr.scale, qb, d, kt, s, bc);
        for (int64_t r = 0; r < m; ++r) {
          T* srow = s + r * bc;
          const int64_t jmax = std::clamp<int64_t>(pr.visible(i0 + r) - j0, 0, n);
          if (jmax == 0) {  // this row sees none of the block: contributes nothing
            std::fill(srow, srow + n, T(0));
            continue;
          }
          T mx = srow[0];
          for (int64_t j = 1; j < jmax; ++j) mx = std::max(mx, srow[j]);
          const T m_new = std::max(mrow[r], mx);
          const T alpha = std::exp(mrow[r] - m_new);  // 0 on the first block (m = -inf)
          exp_shifted(srow, srow, jmax, m_new);
          T sum = 0;
          for (int64_t j = 0; j < jmax; ++j) sum += srow[j];
          std::fill(srow + jmax, srow + n, T(0));
          lrow[r] = alpha * lrow[r] + sum;
          mrow[r] = m_new;
          T* arow = acc + r * d;
          for (int64_t c = 0; c < d; ++c) arow[c] *= alpha;
        }
        gemm_acc_ab(m, d, n, T(1), s, bc, vb + j0 * d, d, acc, d);
      }
      T* ob = o + (bh * nq + i0) * d;
      for (int64_t r = 0; r < m; ++r) {
        const T inv = T(1) / lrow[r];
        for (int64_t c = 0; c < d; ++c) ob[r * d + c] = acc[r * d + c] * inv;
        lse[bh * nq + i0 + r] = mrow[r] + std::log(lrow[r]);
      }
      count_write(m * d + m, E);
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
      const int64_t i_first = pr.causal ? std::max<int64_t>(0, j0 - pr.causal_offset()) : 0;
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
  template void flash_forward<T>(const Problem<T>&, const T*, const T*, const T*, T*, T*);           \
  template void flash_backward<T>(const Problem<T>&, const T*, const T*, const T*, const T*, const T*, \
                                  const T*, T*, T*, T*);
EMBER_INSTANTIATE(float)
EMBER_INSTANTIATE(double)
#undef EMBER_INSTANTIATE

}  // namespace ember::cpu::attn
