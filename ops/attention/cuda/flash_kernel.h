// The CUDA attention kernels' logic as per-thread phases, __host__ __device__, so that the same code
// runs in the __global__ wrappers (attention.cu, with __syncthreads() between phases) and in the
// CPU block emulator of the tests (every thread's phase, then the next phase), which makes a missing
// barrier or a wrong index fail on a machine without a GPU. Each struct documents its launch:
// grid (blocks of rows or columns, batch*head), block of THREADS threads, and Shared in dynamic
// shared memory. Rows of Q and columns of K are handled by TPR (threads per row) threads each: a
// thread owns the head-dimension elements c = lane, lane + TPR, ... (c < d <= DMAX).
#pragma once
#include <cmath>
#include <cstdint>

#include "framework/core/host_device.h"
#include "ops/attention/attention_math.h"

namespace ember::cuda_attn::kern {

struct Dim {
  int x = 0, y = 0;
};

// A launch's grid as the host computes it (attention.cu launches exactly this;
// tests/framework/cuda/launch_limits_test.cpp checks it against the device limits).
struct Grid {
  int64_t x = 1, y = 1;
};
inline int64_t blocks_of(int64_t n, int64_t per) { return (n + per - 1) / per; }

using attention_math::exp_of;
using attention_math::log_of;
template <class T>
EMBER_HD inline T k_max(T a, T b) {
  return a > b ? a : b;
}
template <class T>
EMBER_HD inline T k_neg_inf() {
  return -INFINITY;
}

// What every kernel reads and writes (device pointers, contiguous (BH, N, d)).
template <class T>
struct Args {
  const T* q = nullptr;
  const T* k = nullptr;
  const T* v = nullptr;
  const T* o = nullptr;     // forward output (backward input)
  const T* lse = nullptr;   // row log-sum-exp (backward input)
  const T* dout = nullptr;  // dO
  const T* dvec = nullptr;  // D = rowsum(dO * O)
  T* out = nullptr;
  T* out_lse = nullptr;
  T* dq = nullptr;
  T* dk = nullptr;
  T* dv = nullptr;
  T* dvec_out = nullptr;
  int64_t nq = 0, nk = 0, d = 0;
  T scale = 1;
  bool causal = false;

  // Key j is visible to query i (the causal rule of attention_math.h; rows and columns past the
  // ends of a last, partial block see nothing).
  EMBER_HD bool visible(int64_t i, int64_t j) const {
    return i < nq && attention_math::key_visible(i, j, nq, nk, causal);
  }
};

// Stages K_j and V_j (rows past Nk as zeros) into sh.k and sh.v: BR thread rows of TPR lanes
// each, every lane copying PER elements of a row. The forward and the dQ pass share it.
template <class T, int BR, int BC, int TPR, int PER, class Shared>
EMBER_HD inline void stage_kv(const Args<T>& a, Shared& sh, Dim block, Dim thread, int j) {
  const int lane = thread.x % TPR;
  for (int rr = thread.x / TPR; rr < BC; rr += BR) {
    const int64_t col = int64_t(j) * BC + rr;
    const int64_t base = (int64_t(block.y) * a.nk + col) * a.d;
    for (int u = 0; u < PER; ++u) {
      const int c = lane + u * TPR;
      const bool in = col < a.nk && c < a.d;
      sh.k[rr][c] = in ? a.k[base + c] : T(0);
      sh.v[rr][c] = in ? a.v[base + c] : T(0);
    }
  }
}

// ---- Flash forward: grid (ceil(Nq / BR), BH), THREADS = BR * TPR ----
template <class T, int DMAX, int BR = 32, int BC = 32, int TPR = 4>
struct FlashForward {
  static constexpr int THREADS = BR * TPR;
  static constexpr int PER = DMAX / TPR;  // head elements per thread
  static Grid grid(int64_t nq, int64_t bh) { return {blocks_of(nq, BR), bh}; }
  struct Shared {
    T q[BR][DMAX], k[BC][DMAX], v[BC][DMAX], s[BR][BC];
  };
  struct Regs {
    T acc[PER];
    T m, l;
  };

  // Column blocks this row block must visit (causal: those left of its last row's diagonal).
  EMBER_HD static int col_blocks(const Args<T>& a, Dim block) {
    int64_t last = (int64_t(block.x) + 1) * BR - 1;
    if (last >= a.nq) last = a.nq - 1;
    const int64_t vis = attention_math::visible_keys(last, a.nq, a.nk, a.causal);
    return int((vis + BC - 1) / BC);
  }

  // Phase 0: zero the accumulators and stage this thread's part of Q_i.
  EMBER_HD static void init(const Args<T>& a, Shared& sh, Regs& rg, Dim block, Dim thread) {
    const int r = thread.x / TPR, lane = thread.x % TPR;
    const int64_t row = int64_t(block.x) * BR + r;
    const T* qrow = a.q + (int64_t(block.y) * a.nq + row) * a.d;
    for (int u = 0; u < PER; ++u) {
      const int c = lane + u * TPR;
      rg.acc[u] = 0;
      if (c < DMAX) sh.q[r][c] = (row < a.nq && c < a.d) ? qrow[c] : T(0);
    }
    rg.m = k_neg_inf<T>();
    rg.l = 0;
  }

  // Phase 1 of step j: stage K_j and V_j (rows past Nk as zeros).
  EMBER_HD static void load_kv(const Args<T>& a, Shared& sh, Dim block, Dim thread, int j) {
    stage_kv<T, BR, BC, TPR, PER>(a, sh, block, thread, j);
  }

  // Phase 2: S_ij for this thread's row and columns jj = lane, lane + TPR, ... (masked: -inf).
  EMBER_HD static void scores(const Args<T>& a, Shared& sh, Dim block, Dim thread, int j) {
    const int r = thread.x / TPR, lane = thread.x % TPR;
    const int64_t row = int64_t(block.x) * BR + r;
    for (int jj = lane; jj < BC; jj += TPR) {
      const int64_t col = int64_t(j) * BC + jj;
      T s = 0;
      for (int c = 0; c < a.d; ++c) s += sh.q[r][c] * sh.k[jj][c];
      sh.s[r][jj] = a.visible(row, col) ? s * a.scale : k_neg_inf<T>();
    }
  }

  // Phase 3: the online softmax update of m, l and this thread's part of O_i (each of the TPR
  // threads of a row computes the same m and l from the shared scores).
  EMBER_HD static void update(const Args<T>& a, const Shared& sh, Regs& rg, Dim thread) {
    const int r = thread.x / TPR, lane = thread.x % TPR;
    T mx = k_neg_inf<T>();
    for (int jj = 0; jj < BC; ++jj) mx = k_max(mx, sh.s[r][jj]);
    if (mx == k_neg_inf<T>()) return;  // the row sees no key of this block
    const T m_new = attention_math::online_max(rg.m, mx);
    T p[BC];
    T sum = 0;
    for (int jj = 0; jj < BC; ++jj) {
      p[jj] = sh.s[r][jj] == k_neg_inf<T>() ? T(0) : exp_of(sh.s[r][jj] - m_new);
      sum += p[jj];
    }
    const T alpha = attention_math::online_update(rg.m, rg.l, m_new, sum);
    for (int u = 0; u < PER; ++u) {
      const int c = lane + u * TPR;
      T acc = rg.acc[u] * alpha;
      if (c < a.d)
        for (int jj = 0; jj < BC; ++jj) acc += p[jj] * sh.v[jj][c];
      rg.acc[u] = acc;
    }
  }

  // Phase 4: O_i = acc / l, L_i = m + log l.
  EMBER_HD static void store(const Args<T>& a, const Regs& rg, Dim block, Dim thread) {
    const int r = thread.x / TPR, lane = thread.x % TPR;
    const int64_t row = int64_t(block.x) * BR + r;
    if (row >= a.nq) return;
    T* orow = a.out + (int64_t(block.y) * a.nq + row) * a.d;
    for (int u = 0; u < PER; ++u) {
      const int c = lane + u * TPR;
      if (c < a.d) orow[c] = rg.acc[u] / rg.l;
    }
    if (lane == 0) a.out_lse[int64_t(block.y) * a.nq + row] = attention_math::online_lse(rg.m, rg.l);
  }
};

// ---- D = rowsum(dO * O): one thread per row of the BH * Nq rows, grid ceil(rows / THREADS) ----
template <class T>
struct RowDot {
  static constexpr int THREADS = 128;
  static Grid grid(int64_t rows) { return {blocks_of(rows, THREADS), 1}; }
  EMBER_HD static void run(const Args<T>& a, int64_t rows, Dim block, Dim thread) {
    const int64_t row = int64_t(block.x) * THREADS + thread.x;
    if (row >= rows) return;
    T s = 0;
    for (int64_t c = 0; c < a.d; ++c) s += a.dout[row * a.d + c] * a.o[row * a.d + c];
    a.dvec_out[row] = s;
  }
};

// ---- Flash backward, dK and dV: grid (ceil(Nk / BC), BH), THREADS = BC * TPR ----
// A block owns the column block K_j, V_j and visits the row blocks that can see it; thread
// (column jr, lane) accumulates its part of dK_j and dV_j in registers.
template <class T, int DMAX, int BR = 32, int BC = 32, int TPR = 4>
struct FlashBackwardKV {
  static constexpr int THREADS = BC * TPR;
  static constexpr int PER = DMAX / TPR;
  static Grid grid(int64_t nk, int64_t bh) { return {blocks_of(nk, BC), bh}; }
  struct Shared {
    T k[BC][DMAX], v[BC][DMAX], q[BR][DMAX], dout[BR][DMAX], lse[BR], dd[BR], p[BR][BC], ds[BR][BC];
  };
  struct Regs {
    T dk[PER], dv[PER];
  };

  EMBER_HD static int first_row_block(const Args<T>& a, Dim block) {
    return int(attention_math::first_query_seeing(int64_t(block.x) * BC, a.nq, a.nk, a.causal) / BR);
  }
  EMBER_HD static int row_blocks(const Args<T>& a) { return int((a.nq + BR - 1) / BR); }

  // Phase 0: stage K_j, V_j; zero the accumulators.
  EMBER_HD static void init(const Args<T>& a, Shared& sh, Regs& rg, Dim block, Dim thread) {
    const int jr = thread.x / TPR, lane = thread.x % TPR;
    const int64_t col = int64_t(block.x) * BC + jr;
    const int64_t base = (int64_t(block.y) * a.nk + col) * a.d;
    for (int u = 0; u < PER; ++u) {
      const int c = lane + u * TPR;
      const bool in = col < a.nk && c < a.d;
      sh.k[jr][c] = in ? a.k[base + c] : T(0);
      sh.v[jr][c] = in ? a.v[base + c] : T(0);
      rg.dk[u] = rg.dv[u] = 0;
    }
  }

  // Phase 1 of step i: stage Q_i, dO_i, L_i, D_i.
  EMBER_HD static void load_rows(const Args<T>& a, Shared& sh, Dim block, Dim thread, int i) {
    const int lane = thread.x % TPR;
    for (int rr = thread.x / TPR; rr < BR; rr += BC) {
      const int64_t row = int64_t(i) * BR + rr;
      const int64_t base = (int64_t(block.y) * a.nq + row) * a.d;
      for (int u = 0; u < PER; ++u) {
        const int c = lane + u * TPR;
        const bool in = row < a.nq && c < a.d;
        sh.q[rr][c] = in ? a.q[base + c] : T(0);
        sh.dout[rr][c] = in ? a.dout[base + c] : T(0);
      }
      if (lane == 0) {
        sh.lse[rr] = row < a.nq ? a.lse[int64_t(block.y) * a.nq + row] : T(0);
        sh.dd[rr] = row < a.nq ? a.dvec[int64_t(block.y) * a.nq + row] : T(0);
      }
    }
  }

  // Phase 2: P_ij = exp(S_ij - L_i) and dS_ij = P_ij (dO_i V_j^T - D_i) for this thread's column
  // and rows rr = lane, lane + TPR, ...
  EMBER_HD static void probs(const Args<T>& a, Shared& sh, Dim block, Dim thread, int i) {
    const int jr = thread.x / TPR, lane = thread.x % TPR;
    const int64_t col = int64_t(block.x) * BC + jr;
    for (int rr = lane; rr < BR; rr += TPR) {
      const int64_t row = int64_t(i) * BR + rr;
      T p = 0, ds = 0;
      if (a.visible(row, col)) {
        T s = 0, dp = 0;
        for (int c = 0; c < a.d; ++c) {
          s += sh.q[rr][c] * sh.k[jr][c];
          dp += sh.dout[rr][c] * sh.v[jr][c];
        }
        p = exp_of(s * a.scale - sh.lse[rr]);
        ds = p * (dp - sh.dd[rr]);
      }
      sh.p[rr][jr] = p;
      sh.ds[rr][jr] = ds;
    }
  }

  // Phase 3: dV_j += P_ij^T dO_i, dK_j += scale dS_ij^T Q_i (this thread's column and elements).
  EMBER_HD static void accumulate(const Args<T>& a, const Shared& sh, Regs& rg, Dim thread) {
    const int jr = thread.x / TPR, lane = thread.x % TPR;
    for (int u = 0; u < PER; ++u) {
      const int c = lane + u * TPR;
      if (c >= a.d) continue;
      T dv = 0, dk = 0;
      for (int rr = 0; rr < BR; ++rr) {
        dv += sh.p[rr][jr] * sh.dout[rr][c];
        dk += sh.ds[rr][jr] * sh.q[rr][c];
      }
      rg.dv[u] += dv;
      rg.dk[u] += dk * a.scale;
    }
  }

  EMBER_HD static void store(const Args<T>& a, const Regs& rg, Dim block, Dim thread) {
    const int jr = thread.x / TPR, lane = thread.x % TPR;
    const int64_t col = int64_t(block.x) * BC + jr;
    if (col >= a.nk) return;
    const int64_t base = (int64_t(block.y) * a.nk + col) * a.d;
    for (int u = 0; u < PER; ++u) {
      const int c = lane + u * TPR;
      if (c < a.d) {
        a.dk[base + c] = rg.dk[u];
        a.dv[base + c] = rg.dv[u];
      }
    }
  }
};

// ---- Flash backward, dQ: grid (ceil(Nq / BR), BH), THREADS = BR * TPR ----
// Recomputes P and dS a second time instead of sharing dQ between column blocks with atomics:
// deterministic, and the emulator needs no atomics.
template <class T, int DMAX, int BR = 32, int BC = 32, int TPR = 4>
struct FlashBackwardQ {
  static constexpr int THREADS = BR * TPR;
  static constexpr int PER = DMAX / TPR;
  static Grid grid(int64_t nq, int64_t bh) { return {blocks_of(nq, BR), bh}; }
  struct Shared {
    T q[BR][DMAX], dout[BR][DMAX], lse[BR], dd[BR], k[BC][DMAX], v[BC][DMAX], ds[BR][BC];
  };
  struct Regs {
    T dq[PER];
  };

  EMBER_HD static int col_blocks(const Args<T>& a, Dim block) {
    return FlashForward<T, DMAX, BR, BC, TPR>::col_blocks(a, block);
  }

  // Phase 0: stage Q_i, dO_i, L_i, D_i; zero dQ.
  EMBER_HD static void init(const Args<T>& a, Shared& sh, Regs& rg, Dim block, Dim thread) {
    const int r = thread.x / TPR, lane = thread.x % TPR;
    const int64_t row = int64_t(block.x) * BR + r;
    const int64_t base = (int64_t(block.y) * a.nq + row) * a.d;
    for (int u = 0; u < PER; ++u) {
      const int c = lane + u * TPR;
      const bool in = row < a.nq && c < a.d;
      sh.q[r][c] = in ? a.q[base + c] : T(0);
      sh.dout[r][c] = in ? a.dout[base + c] : T(0);
      rg.dq[u] = 0;
    }
    if (lane == 0) {
      sh.lse[r] = row < a.nq ? a.lse[int64_t(block.y) * a.nq + row] : T(0);
      sh.dd[r] = row < a.nq ? a.dvec[int64_t(block.y) * a.nq + row] : T(0);
    }
  }

  // Phase 1 of step j: stage K_j, V_j.
  EMBER_HD static void load_kv(const Args<T>& a, Shared& sh, Dim block, Dim thread, int j) {
    stage_kv<T, BR, BC, TPR, PER>(a, sh, block, thread, j);
  }

  // Phase 2: dS_ij for this thread's row and columns jj = lane, lane + TPR, ...
  EMBER_HD static void dscores(const Args<T>& a, Shared& sh, Dim block, Dim thread, int j) {
    const int r = thread.x / TPR, lane = thread.x % TPR;
    const int64_t row = int64_t(block.x) * BR + r;
    for (int jj = lane; jj < BC; jj += TPR) {
      const int64_t col = int64_t(j) * BC + jj;
      T ds = 0;
      if (a.visible(row, col)) {
        T s = 0, dp = 0;
        for (int c = 0; c < a.d; ++c) {
          s += sh.q[r][c] * sh.k[jj][c];
          dp += sh.dout[r][c] * sh.v[jj][c];
        }
        ds = exp_of(s * a.scale - sh.lse[r]) * (dp - sh.dd[r]);
      }
      sh.ds[r][jj] = ds;
    }
  }

  // Phase 3: dQ_i += scale dS_ij K_j.
  EMBER_HD static void accumulate(const Args<T>& a, const Shared& sh, Regs& rg, Dim thread) {
    const int r = thread.x / TPR, lane = thread.x % TPR;
    for (int u = 0; u < PER; ++u) {
      const int c = lane + u * TPR;
      if (c >= a.d) continue;
      T acc = 0;
      for (int jj = 0; jj < BC; ++jj) acc += sh.ds[r][jj] * sh.k[jj][c];
      rg.dq[u] += acc * a.scale;
    }
  }

  EMBER_HD static void store(const Args<T>& a, const Regs& rg, Dim block, Dim thread) {
    const int r = thread.x / TPR, lane = thread.x % TPR;
    const int64_t row = int64_t(block.x) * BR + r;
    if (row >= a.nq) return;
    const int64_t base = (int64_t(block.y) * a.nq + row) * a.d;
    for (int u = 0; u < PER; ++u) {
      const int c = lane + u * TPR;
      if (c < a.d) a.dq[base + c] = rg.dq[u];
    }
  }
};

// ---- Standard path: row softmax of S (already scaled by the GEMM), in place into P, masked,
// with the row log-sum-exp. Grid (Nq, BH), THREADS threads per row. ----
template <class T, int THREADS_ = 128>
struct RowSoftmax {
  static constexpr int THREADS = THREADS_;
  static Grid grid(int64_t nq, int64_t bh) { return {nq, bh}; }
  struct Shared {
    T maxs[THREADS], sums[THREADS];
  };
  struct Regs {
    T mx;
  };
  // p: (BH, Nq, Nk) holding S; a.out_lse receives L.
  EMBER_HD static int64_t visible_cols(const Args<T>& a, int64_t row) {
    return attention_math::visible_keys(row, a.nq, a.nk, a.causal);
  }
  // Phase 0: this thread's max over its columns.
  EMBER_HD static void partial_max(const Args<T>& a, T* p, Shared& sh, Dim block, Dim thread) {
    const T* srow = p + (int64_t(block.y) * a.nq + block.x) * a.nk;
    const int64_t vis = visible_cols(a, block.x);
    T mx = k_neg_inf<T>();
    for (int64_t j = thread.x; j < vis; j += THREADS) mx = k_max(mx, srow[j]);
    sh.maxs[thread.x] = mx;
  }
  // Phase 1: the row max (read from every thread's partial), this thread's sum of exponentials.
  EMBER_HD static void partial_sum(const Args<T>& a, T* p, Shared& sh, Regs& rg, Dim block, Dim thread) {
    T mx = k_neg_inf<T>();
    for (int t = 0; t < THREADS; ++t) mx = k_max(mx, sh.maxs[t]);
    rg.mx = mx;
    const T* srow = p + (int64_t(block.y) * a.nq + block.x) * a.nk;
    const int64_t vis = visible_cols(a, block.x);
    T s = 0;
    for (int64_t j = thread.x; j < vis; j += THREADS) s += exp_of(srow[j] - mx);
    sh.sums[thread.x] = s;
  }
  // Phase 2: P = exp(S - max) / sum (0 where masked) and L = max + log(sum).
  EMBER_HD static void normalise(const Args<T>& a, T* p, const Shared& sh, const Regs& rg, Dim block, Dim thread) {
    T total = 0;
    for (int t = 0; t < THREADS; ++t) total += sh.sums[t];
    T* srow = p + (int64_t(block.y) * a.nq + block.x) * a.nk;
    const int64_t vis = visible_cols(a, block.x);
    const T inv = T(1) / total;
    for (int64_t j = thread.x; j < a.nk; j += THREADS) srow[j] = j < vis ? exp_of(srow[j] - rg.mx) * inv : T(0);
    if (thread.x == 0) a.out_lse[int64_t(block.y) * a.nq + block.x] = attention_math::online_lse(rg.mx, total);
  }
};

// ---- Standard backward: dS = P * (dP - D) elementwise, in place over dP. One thread per element. ----
template <class T>
struct SoftmaxBackward {
  static constexpr int THREADS = 256;
  static Grid grid(int64_t total) { return {blocks_of(total, THREADS), 1}; }
  // total = BH * Nq * Nk; element e belongs to row e / Nk of the (BH * Nq) rows.
  EMBER_HD static void run(const Args<T>& a, const T* p, T* ds, int64_t total, Dim block, Dim thread) {
    const int64_t e = int64_t(block.x) * THREADS + thread.x;
    if (e >= total) return;
    ds[e] = p[e] * (ds[e] - a.dvec[e / a.nk]);
  }
};

}  // namespace ember::cuda_attn::kern
