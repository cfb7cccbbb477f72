// FlashAttention-2 on the CPU, the production kernels. The forward's outer loop runs over query
// blocks Q_i (one task each, parallel over batch*head x query block); a task keeps O_i (unscaled),
// its running row max m_i and sum l_i in a per-thread buffer of L1/L2 size across all key blocks
// and normalises once at the end, so O is written once and never re-read from memory (Algorithm 1,
// the study's examples/attention/study/flash.cpp, re-reads and re-writes O_i for every key block). Both block products, S = Q_i K_j^T
// and O_i += P V_j, run on the packed GEMM's register micro-kernel (ops/matmul/cpu): K and V are
// packed once per head into its B-sliver layout (so every query block reuses them), Q_i and P into
// A slivers per block. Causal: key blocks past a query block's last visible key are never visited.
//
// The backward recomputes P from the saved log-sum-exp. Tasks are key blocks K_j, V_j (parallel
// over batch*head x key block); a task holds dK_j and dV_j in a per-thread buffer across all query
// blocks and computes, per query block, S^T = K_j Q_i^T, dP^T = V_j dO_i^T, P^T and dS^T, then
// dV_j += P^T dO_i, dK_j += dS^T Q_i and dQ_i += dS K_j, the last into a per-thread dQ buffer for
// the head that is added to dQ under a lock when the thread moves to another head. Five products
// per block pair, all on the micro-kernel; Q, dO and K are packed once per head.
#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

#include "framework/parallel.h"
#include "framework/tensor.h"
#include "ops/attention/cpu/flash2_rows.h"
#include "ops/attention/cpu/kernels.h"
#include "ops/matmul/cpu/packed_config.h"
#include "ops/matmul/cpu/packing.h"

namespace ember::cpu::attn {
namespace {

template <class T>
const PackedConfig<T>& config();
template <>
const PackedConfig<float>& config<float>() {
  static const PackedConfig<float> c = packed_config_f32(best_cpu_isa());
  return c;
}
template <>
const PackedConfig<double>& config<double>() {
  static const PackedConfig<double> c = packed_config_f64(best_cpu_isa());
  return c;
}

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
int64_t ceil_div(int64_t x, int64_t m) { return (x + m - 1) / m; }

// Tasks in the order 0, n-1, 1, n-2, ...: parallel_for hands each thread a contiguous range, and
// under a causal mask the cost of a block grows (forward) or shrinks (backward) with its index,
// so pairing the two ends gives every thread about the same work.
int64_t zigzag(int64_t i, int64_t n) { return i % 2 == 0 ? i / 2 : n - 1 - i / 2; }

// A block of at most `most` rows, a multiple of `mr` and at least 4 * mr, that splits heads x n
// rows into tasks the threads share most evenly (the largest share of rows, in whole tasks,
// smallest; ties to the larger block, which re-reads K and V less often). With N = 1024 and two
// threads, 96-row blocks make 11 tasks (6 against 5); 66-row blocks make 16.
int64_t balanced_block(int64_t most, int mr, int64_t n, int64_t heads) {
  const int64_t threads = num_threads();
  int64_t best = most, best_rows = -1;
  for (int64_t b = most; b >= 4 * mr; b -= mr) {
    const int64_t tasks = heads * ceil_div(n, b), rows = ceil_div(tasks, threads) * std::min(b, n);
    if (best_rows < 0 || rows < best_rows) best = b, best_rows = rows;
  }
  return best;
}

// B-sliver packing of a row-major (rows x cols, row stride ld) matrix X, either as B = X (slivers
// over X's columns, k running over its rows) or as B = X^T (slivers over X's rows, k over columns).
template <class T>
void pack_as_b(const T* x, int64_t rows, int64_t cols, int64_t ld, bool transposed, int nr, T* dst) {
  GemmArgs g{};
  g.dtype = dtype_of<T>::value;
  const bool simd = config<T>().isa >= CpuIsa::Avx2;
  if (transposed) {
    g.k = cols, g.n = rows, g.b_rs = 1, g.b_cs = ld;
    pack_b_slivers(g, x, 0, cols, 0, 0, ceil_div(rows, nr), nr, dst, simd);
  } else {
    g.k = rows, g.n = cols, g.b_rs = ld, g.b_cs = 1;
    pack_b_slivers(g, x, 0, rows, 0, 0, ceil_div(cols, nr), nr, dst, simd);
  }
}

// A slivers of rows [r0, r0 + n_slivers * mr) x columns [0, kc) of X (strides rs, cs; `rows` rows
// exist, the rest are zero).
template <class T>
void pack_as_a(const T* x, int64_t rows, int64_t rs, int64_t cs, int64_t r0, int64_t n_slivers, int64_t kc, int mr,
               T* dst) {
  GemmArgs g{};
  g.m = rows, g.k = kc, g.a_rs = rs, g.a_cs = cs, g.dtype = dtype_of<T>::value;
  for (int64_t s = 0; s < n_slivers; ++s) pack_a_sliver(g, x, r0 + s * mr, 0, kc, mr, dst + s * mr * kc);
}

// C (mp*MR x ns*NR, row stride ldc) (+)= A slivers [mp] x B slivers [ns], both packed with kc.
template <class T>
void block_product(const PackedConfig<T>& cfg, int64_t kc, const T* ap, int64_t mp, const T* bp, int64_t b_stride,
                   int64_t ns, T* c, int64_t ldc, bool accumulate) {
  for (int64_t s = 0; s < ns; ++s)
    for (int64_t ip = 0; ip < mp; ++ip)
      cfg.kernel(kc, ap + ip * cfg.mr * kc, bp + s * b_stride, c + ip * cfg.mr * ldc + s * cfg.nr, ldc, accumulate);
}

}  // namespace

template <class T>
void flash2_forward(const Problem<T>& pr, const T* q, const T* k, const T* v, T* o, T* lse) {
  // A generation step (a few queries against a long cache): packing K and V would copy the whole
  // cache for a few rows of work; decode_forward reads them in place with dot products.
  if (pr.nq < kFewRows) return decode_forward(pr, q, k, v, o, lse);
  const PackedConfig<T>& cfg = config<T>();
  const Flash2Rows<T>& rows = flash2_rows<T>();
  const int MR = cfg.mr, NR = cfg.nr;
  const int64_t d = pr.d, nq = pr.nq, nk = pr.nk, dp = round_up(d, NR), nkp = round_up(nk, NR);
  const int64_t br = balanced_block(round_up(96, MR), MR, nq, pr.bh), bc = round_up(256, NR), tr = ceil_div(nq, br);
  const int64_t kv = pr.kv_stride();

  // K as B^T slivers (kc = d) for S = Q K^T; V as B slivers (k over keys) for O += P V.
  Tensor packed = empty({pr.bh * (nkp * d + dp * nk)}, dtype_of<T>::value);
  T* kp_all = packed.data<T>();
  T* vp_all = kp_all + pr.bh * nkp * d;
  parallel_for(pr.bh, task_grain(4 * nk * d), [&](int64_t b, int64_t e) {
    for (int64_t h = b; h < e; ++h) {
      pack_as_b(k + h * kv, nk, d, d, true, NR, kp_all + h * nkp * d);
      pack_as_b(v + h * kv, nk, d, d, false, NR, vp_all + h * dp * nk);
    }
  });

  const T neg_inf = -std::numeric_limits<T>::infinity();
  parallel_for(pr.bh * tr, task_grain(4 * br * nk * d), [&](int64_t b, int64_t e) {
    Tensor scratch = empty({br * d + 2 * br * bc + br * dp + 2 * br}, dtype_of<T>::value);
    T* qa = scratch.data<T>();
    T* s = qa + br * d;
    T* pa = s + br * bc;
    T* acc = pa + br * bc;
    T* mrow = acc + br * dp;
    T* lrow = mrow + br;
    for (int64_t t = b; t < e; ++t) {
      const int64_t h = t / tr, i0 = zigzag(t % tr, tr) * br, m = std::min(br, nq - i0), mp = ceil_div(m, MR);
      const T* kp = kp_all + h * nkp * d;
      const T* vp = vp_all + h * dp * nk;
      pack_as_a(q + h * nq * d, nq, d, int64_t(1), i0, mp, d, MR, qa);
      std::fill(acc, acc + mp * MR * dp, T(0));
      std::fill(mrow, mrow + m, neg_inf);
      std::fill(lrow, lrow + m, T(0));
      const int64_t vis = pr.visible(i0 + m - 1);
      for (int64_t j0 = 0; j0 < vis; j0 += bc) {
        const int64_t n = std::min(bc, vis - j0), ns = ceil_div(n, NR);
        block_product(cfg, d, qa, mp, kp + j0 * d, NR * d, ns, s, bc, false);
        for (int64_t r = 0; r < m; ++r) {
          T* srow = s + r * bc;
          const int64_t jmax = std::clamp<int64_t>(pr.visible(i0 + r) - j0, 0, n);
          if (jmax == 0) {  // sees none of this block (causal): contributes nothing
            std::fill(srow, srow + ns * NR, T(0));
            continue;
          }
          T m_new, sum;
          rows.softmax_row(srow, jmax, ns * NR, pr.scale, mrow[r], &m_new, &sum);
          // alpha is 0 on the first block (m = -inf).
          const T alpha = attention_math::online_update(mrow[r], lrow[r], m_new, sum);
          if (alpha != T(1)) {
            T* arow = acc + r * dp;
            for (int64_t c = 0; c < dp; ++c) arow[c] *= alpha;
          }
        }
        // Rows past m (padding of the last sliver) are zero queries: finite scores, never read.
        pack_as_a(s, mp * MR, bc, int64_t(1), int64_t(0), mp, n, MR, pa);
        block_product(cfg, n, pa, mp, vp + j0 * NR, NR * nk, dp / NR, acc, dp, true);
      }
      T* ob = o + (h * nq + i0) * d;
      for (int64_t r = 0; r < m; ++r) {
        const T inv = T(1) / lrow[r];
        for (int64_t c = 0; c < d; ++c) ob[r * d + c] = acc[r * dp + c] * inv;
        lse[h * nq + i0 + r] = attention_math::online_lse(mrow[r], lrow[r]);
      }
    }
  });
}

template <class T>
void flash2_backward(const Problem<T>& pr, const T* q, const T* k, const T* v, const T* o, const T* lse,
                     const T* dout, T* dq, T* dk, T* dv) {
  const PackedConfig<T>& cfg = config<T>();
  const Flash2Rows<T>& rows = flash2_rows<T>();
  const int MR = cfg.mr, NR = cfg.nr;
  const int64_t d = pr.d, nq = pr.nq, nk = pr.nk, dp = round_up(d, NR), nqp = round_up(nq, NR);
  // bk keys (A side, MR-multiple) per task, bq queries (B side, NR-multiple) per inner step.
  const int64_t bk = balanced_block(round_up(96, MR), MR, nk, pr.bh), bq = round_up(128, NR), tc = ceil_div(nk, bk);

  Tensor dvec_t = empty({pr.bh * nq}, dtype_of<T>::value);
  T* dvec = dvec_t.data<T>();
  rowdot(pr.bh * nq, d, dout, o, dvec);
  std::fill(dq, dq + pr.bh * nq * d, T(0));

  // Per head: Q and dO as B^T slivers (kc = d) for S^T = K Q^T and dP^T = V dO^T; Q, dO and K as
  // B slivers (k over rows) for dK += dS^T Q, dV += P^T dO and dQ += dS K.
  const int64_t per_head = 2 * nqp * d + 2 * dp * nq + dp * nk;
  Tensor packed = empty({pr.bh * per_head}, dtype_of<T>::value);
  parallel_for(pr.bh, task_grain(8 * nq * d), [&](int64_t b, int64_t e) {
    for (int64_t h = b; h < e; ++h) {
      T* base = packed.data<T>() + h * per_head;
      pack_as_b(q + h * nq * d, nq, d, d, true, NR, base);
      pack_as_b(dout + h * nq * d, nq, d, d, true, NR, base + nqp * d);
      pack_as_b(q + h * nq * d, nq, d, d, false, NR, base + 2 * nqp * d);
      pack_as_b(dout + h * nq * d, nq, d, d, false, NR, base + 2 * nqp * d + dp * nq);
      pack_as_b(k + h * nk * d, nk, d, d, false, NR, base + 2 * nqp * d + 2 * dp * nq);
    }
  });

  std::mutex dq_mutex;
  parallel_for(pr.bh * tc, task_grain(8 * bk * nq * d), [&](int64_t b, int64_t e) {
    Tensor scratch = empty({2 * bk * d + 4 * bk * bq + round_up(bq, MR) * bk + 2 * bk * dp + (nq + MR) * dp},
                           dtype_of<T>::value);
    T* ka = scratch.data<T>();
    T* va = ka + bk * d;
    T* st = va + bk * d;    // S^T, then P^T in place
    T* dpt = st + bk * bq;  // dP^T, then dS^T in place
    T* pa = dpt + bk * bq;  // P^T as A slivers
    T* da = pa + bk * bq;   // dS^T as A slivers
    T* dsa = da + bk * bq;  // dS as A slivers (bq rounded up to MR, x bk)
    T* dk_acc = dsa + round_up(bq, MR) * bk;
    T* dv_acc = dk_acc + bk * dp;
    T* dq_acc = dv_acc + bk * dp;
    int64_t cur = -1, lo_row = nq;  // the head dq_acc holds, and its first touched row
    auto flush = [&] {
      if (cur < 0 || lo_row >= nq) return;
      std::lock_guard<std::mutex> lock(dq_mutex);
      for (int64_t r = lo_row; r < nq; ++r) {
        T* dst = dq + (cur * nq + r) * d;
        const T* src = dq_acc + r * dp;
        for (int64_t c = 0; c < d; ++c) dst[c] += pr.scale * src[c];
      }
    };
    for (int64_t t = b; t < e; ++t) {
      const int64_t h = t / tc, j0 = zigzag(t % tc, tc) * bk, n = std::min(bk, nk - j0), mp = ceil_div(n, MR);
      if (h != cur) {
        flush();
        std::fill(dq_acc, dq_acc + (nq + MR) * dp, T(0));
        cur = h;
        lo_row = nq;
      }
      const T* base = packed.data<T>() + h * per_head;
      const T *qt = base, *dot = base + nqp * d, *qb = base + 2 * nqp * d, *dob = qb + dp * nq, *kb = dob + dp * nq;
      pack_as_a(k + h * nk * d, nk, d, int64_t(1), j0, mp, d, MR, ka);
      pack_as_a(v + h * nk * d, nk, d, int64_t(1), j0, mp, d, MR, va);
      std::fill(dk_acc, dk_acc + mp * MR * dp, T(0));
      std::fill(dv_acc, dv_acc + mp * MR * dp, T(0));
      // Queries before the first one that sees key j0 contribute nothing (causal).
      const int64_t i_first = pr.first_query(j0);
      for (int64_t i0 = i_first / bq * bq; i0 < nq; i0 += bq) {
        const int64_t m = std::min(bq, nq - i0), ns = ceil_div(m, NR), mq = ceil_div(m, MR);
        block_product(cfg, d, ka, mp, qt + i0 * d, NR * d, ns, st, bq, false);
        block_product(cfg, d, va, mp, dot + i0 * d, NR * d, ns, dpt, bq, false);
        for (int64_t r = 0; r < mp * MR; ++r) {
          // Key j0 + r is visible to queries i >= j0 + r - offset; padding keys to none.
          int64_t lo = 0, hi = r < n ? m : 0;
          if (pr.causal) lo = std::clamp<int64_t>(pr.first_query(j0 + r) - i0, 0, hi);
          rows.grad_row(st + r * bq, dpt + r * bq, lo, hi, ns * NR, pr.scale, lse + h * nq + i0, dvec + h * nq + i0);
        }
        pack_as_a(st, mp * MR, bq, int64_t(1), int64_t(0), mp, m, MR, pa);
        pack_as_a(dpt, mp * MR, bq, int64_t(1), int64_t(0), mp, m, MR, da);
        block_product(cfg, m, pa, mp, dob + i0 * NR, NR * nq, dp / NR, dv_acc, dp, true);
        block_product(cfg, m, da, mp, qb + i0 * NR, NR * nq, dp / NR, dk_acc, dp, true);
        // dS (m x n) is the transpose of the dS^T block: A slivers read down its columns.
        pack_as_a(dpt, m, int64_t(1), bq, int64_t(0), mq, n, MR, dsa);
        block_product(cfg, n, dsa, mq, kb + j0 * NR, NR * nk, dp / NR, dq_acc + i0 * dp, dp, true);
        lo_row = std::min(lo_row, i0);
      }
      for (int64_t r = 0; r < n; ++r)
        for (int64_t c = 0; c < d; ++c) {
          dk[(h * nk + j0 + r) * d + c] = pr.scale * dk_acc[r * dp + c];
          dv[(h * nk + j0 + r) * d + c] = dv_acc[r * dp + c];
        }
    }
    flush();
  });
}

#define EMBER_INSTANTIATE(T)                                                                           \
  template void flash2_forward<T>(const Problem<T>&, const T*, const T*, const T*, T*, T*);           \
  template void flash2_backward<T>(const Problem<T>&, const T*, const T*, const T*, const T*, const T*, \
                                   const T*, T*, T*, T*);
EMBER_INSTANTIATE(float)
EMBER_INSTANTIATE(double)
#undef EMBER_INSTANTIATE

}  // namespace ember::cpu::attn
