// FlashAttention-2 on the CPU, the production kernels. The forward's outer loop runs over query
// blocks Q_i (one task each, parallel over batch*head x query block); a task keeps O_i (unscaled),
// its running row max m_i and sum l_i in a per-thread buffer of L1/L2 size across all key blocks
// and normalises once at the end, so O is written once and never re-read from memory (Algorithm 1,
// the study's examples/attention/study/flash.cpp, re-reads and re-writes O_i for every key block).
//
// Both block products run on the packed GEMM's register micro-kernel (ops/matmul/cpu), and the
// forward works on transposes so that neither P nor anything else is packed per block: it
// computes S^T = K_j Q_i^T with K as A slivers and Q_i^T as one B sliver of NR queries, writing
// the C tiles straight into the B-sliver layout (a row per key, NR queries along it); the softmax
// then runs down the columns, NR queries per pass in vector registers, and O_i^T += V_j^T P^T reads
// that tile in place as its B sliver (V^T packed once per head as A slivers). O_i^T is transposed
// back once, at the end. Causal: key blocks past a query sliver's last visible key are never visited.
//
// The backward recomputes P from the saved log-sum-exp. Tasks are key slivers K_j, V_j (NR keys;
// parallel over batch*head x key sliver); a task holds dK_j^T and dV_j^T across all query blocks
// and computes, per query block, S = Q_i K_j^T and dP = dO_i V_j^T as tiles in the B-sliver layout
// (a row per query), P and dS in place, then dV_j^T += dO_i^T P and dK_j^T += Q_i^T dS reading
// those tiles as B slivers, and dQ_i += dS K_j, the one product that needs a packed copy (dS as A
// slivers), into a per-thread dQ buffer for the head that is added to dQ under a lock when the
// thread moves to another head. Five products per block pair, one packing; Q and dO (and their
// transposes) are packed once per head, K_j and V_j once per task.
#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <type_traits>
#include <vector>

#include "framework/core/parallel.h"
#include "framework/core/tensor.h"
#include "ops/attention/cpu/flash2_rows.h"
#include "ops/attention/cpu/kernels.h"
#include "ops/matmul/cpu/pack_avx2.h"
#include "ops/matmul/cpu/packed_config.h"
#include "ops/matmul/cpu/packing.h"

namespace ember::cpu::attn {
namespace {

template <class T>
PackedConfig<T> config(CpuIsa isa);
template <>
PackedConfig<float> config<float>(CpuIsa isa) {
  return packed_config_f32(isa);
}
template <>
PackedConfig<double> config<double>(CpuIsa isa) {
  return packed_config_f64(isa);
}

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
int64_t ceil_div(int64_t x, int64_t m) { return (x + m - 1) / m; }

// Tasks in the order 0, n-1, 1, n-2, ...: parallel_for hands each thread a contiguous range, and
// under a causal mask the cost of a block grows (forward) or shrinks (backward) with its index,
// so pairing the two ends gives every thread about the same work.
int64_t zigzag(int64_t i, int64_t n) { return i % 2 == 0 ? i / 2 : n - 1 - i / 2; }

// Keys per block of the forward (rounded to MR): a block of S^T for one sliver of queries,
// kForwardKeyBlock x NR floats (32 KiB with AVX-512's NR = 64), stays in L1 from the product that
// writes it through the softmax's two passes to the product that reads it.
constexpr int64_t kForwardKeyBlock = 128;
// The most keys for which the forward reads K where it lies (six rows at a time, `kernel_rows_a`)
// instead of packing it as A slivers. The copy costs a pass over K per head, the in-place reads a
// little on every product (six streams from the L2 or L3 instead of one): at N = 512 reading in
// place ran 1.02-1.05x, at N = 1024 0.98-1.01x and at 4096 0.95-0.97x, as the products grow with
// N^2 and the copy with N.
constexpr int64_t kKeysInPlace = 512;
// Queries per inner step of the backward (rounded to MR): its S, dP (bq x NR each) and dS's A
// slivers stay in L1 and L2 between the two products that write them and the three that read them.
constexpr int64_t kBackwardQueryBlock = 96;

// A block of at most `most` rows and at least `least`, a multiple of `step`, that splits heads x n
// rows into tasks the threads share most evenly (the largest share of rows, in whole tasks,
// smallest; ties to the larger block, which re-reads K and V less often). With N = 1024 and two
// threads, 96-row blocks make 11 tasks (6 against 5); 66-row blocks make 16.
int64_t balanced_block(int64_t most, int64_t step, int64_t least, int64_t n, int64_t heads) {
  const int64_t threads = num_threads();
  int64_t best = most, best_rows = -1;
  for (int64_t b = most; b >= least; b -= step) {
    const int64_t tasks = heads * ceil_div(n, b), rows = ceil_div(tasks, threads) * std::min(b, n);
    if (best_rows < 0 || rows < best_rows) best = b, best_rows = rows;
  }
  return best;
}

// B-sliver packing of a row-major (rows x cols, row stride ld) matrix X, either as B = X (slivers
// over X's columns, k running over its rows) or as B = X^T (slivers over X's rows, k over columns).
template <class T>
void pack_as_b(const T* x, int64_t rows, int64_t cols, int64_t ld, bool transposed, const PackedConfig<T>& cfg,
               T* dst) {
  GemmArgs g{};
  g.dtype = dtype_of<T>::value;
  const int nr = cfg.nr;
  const bool simd = cfg.isa >= CpuIsa::Avx2;
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

// C (+)= A Bp for `rows` rows of A held as MR-row slivers a_step apart (C's slivers c_step apart,
// rows c_rs apart), Bp one packed B sliver. Where rows is not a multiple of MR the last sliver is
// padding in part (d = 128 = 21 x 6 + 2: 3% of the product); it runs a kernel for just its rows
// where the instruction set has one, and C's padded rows are left untouched.
template <class T>
void a_slivers_times_b(const PackedConfig<T>& cfg, int64_t rows, int64_t kc, const T* a, int64_t a_step, const T* bp,
                       T* c, int64_t c_step, int64_t c_rs, bool accumulate) {
  const int64_t full = rows / cfg.mr, rest = rows - full * cfg.mr;
  for (int64_t ip = 0; ip < full; ++ip) cfg.kernel(kc, a + ip * a_step, bp, c + ip * c_step, c_rs, accumulate);
  if (rest == 0) return;
  if (cfg.first_rows_strided_b[rest])
    cfg.first_rows_strided_b[rest](kc, a + full * a_step, bp, cfg.nr, c + full * c_step, c_rs, accumulate, nullptr, 0,
                                   0, nullptr);
  else
    cfg.kernel(kc, a + full * a_step, bp, c + full * c_step, c_rs, accumulate);
}

// out = acc^T: out[r * d + c] = acc[c * acc_rs + r] for r < rows, c < d. The kernels accumulate
// O^T, dK^T and dV^T (a row per head dimension); read column-wise one float at a time, this
// transpose took 2-4% of the forward at N = 512-1024, so floats go through
// the 8 x 8 register transposes of the B packing.
template <class T>
void transpose_out(const T* acc, int64_t acc_rs, int64_t rows, int64_t d, CpuIsa isa, T* out) {
#if defined(__x86_64__) || defined(__i386__)
  if constexpr (std::is_same_v<T, float>) {
    if (isa >= CpuIsa::Avx2) return pack_b_transposed_avx2(acc, acc_rs, 0, rows, 0, d, int(d), out);
  }
#endif
  (void)isa;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < d; ++c) out[r * d + c] = acc[c * acc_rs + r];
}

// O_i = (O_i^T)^T / l, row by row: acc holds O_i^T (d rows of bq queries), ob gets m rows of d.
template <class T>
void write_output(const T* acc, int64_t bq, int64_t m, int64_t d, const T* l, CpuIsa isa, T* ob) {
  transpose_out(acc, bq, m, d, isa, ob);
  for (int64_t r = 0; r < m; ++r) {
    const T inv = T(1) / l[r];
    for (int64_t c = 0; c < d; ++c) ob[r * d + c] *= inv;
  }
}

}  // namespace

template <class T>
void flash2_forward(const Problem<T>& pr, const T* q, const T* k, const T* v, T* o, T* lse, CpuIsa isa) {
  // A generation step (a few queries against a long cache): packing K and V would copy the whole
  // cache for a few rows of work; decode_forward reads them in place with dot products.
  if (pr.nq < kFewRows) return decode_forward(pr, q, k, v, o, lse);
  const PackedConfig<T> cfg = config<T>(isa);
  const Flash2Rows<T> rows = flash2_rows<T>(isa);
  const int MR = cfg.mr, NR = cfg.nr;
  const int64_t d = pr.d, nq = pr.nq, nk = pr.nk, dm = round_up(d, MR), nkm = round_up(nk, MR);
  const int64_t most = round_up(128, NR);
  const int64_t bq = balanced_block(most, NR, std::min(most, round_up(64, NR)), nq, pr.bh), tr = ceil_div(nq, bq);
  const int64_t bc = round_up(kForwardKeyBlock, MR), kv = pr.kv_stride();

  // Per head, K as A slivers (MR keys, kc = d) for S^T = K_j Q_i^T, and V^T as A slivers (MR head
  // dimensions, k over keys) for O_i^T += V_j^T P_ij^T.
  // Up to kKeysInPlace keys, S^T's kernel reads K's rows where they lie instead of a packed copy.
  const bool k_in_place = cfg.kernel_rows_a != nullptr && nk <= kKeysInPlace;
  const int64_t k_packed = k_in_place ? 0 : nkm * d;  // per head
  Tensor packed = empty({pr.bh * (k_packed + dm * nk)}, dtype_of<T>::value);
  T* ka_all = packed.data<T>();
  T* va_all = ka_all + pr.bh * k_packed;
  parallel_for(pr.bh, task_grain(4 * nk * d), [&](int64_t b, int64_t e) {
    for (int64_t h = b; h < e; ++h) {
      if (!k_in_place) pack_as_a(k + h * kv, nk, d, int64_t(1), int64_t(0), nkm / MR, d, MR, ka_all + h * k_packed);
      pack_as_a(v + h * kv, d, int64_t(1), d, int64_t(0), dm / MR, nk, MR, va_all + h * dm * nk);
    }
  });

  parallel_for(pr.bh * tr, task_grain(4 * bq * nk * d), [&](int64_t b, int64_t e) {
    Tensor scratch = empty({bq * d + bq * bc + dm * bq + 3 * bq}, dtype_of<T>::value);
    T* qb = scratch.data<T>();  // Q_i^T as B slivers, pre-scaled
    T* pt = qb + bq * d;        // S^T, then P^T, as B slivers: sliver s at pt + s * bc * NR
    T* acc = pt + bq * bc;      // O_i^T, unnormalised (dm x bq, row-major)
    T* mrow = acc + dm * bq;
    T* lrow = mrow + bq;
    T* alpha = lrow + bq;
    std::vector<int32_t> lim(static_cast<size_t>(NR));
    for (int64_t t = b; t < e; ++t) {
      const int64_t h = t / tr, i0 = zigzag(t % tr, tr) * bq, m = std::min(bq, nq - i0), ns = ceil_div(m, NR);
      const T* ka = ka_all + h * k_packed;
      const T* kh = k + h * kv;
      const T* va = va_all + h * dm * nk;
      pack_as_b(q + (h * nq + i0) * d, m, d, d, true, cfg, qb);
      for (int64_t x = 0; x < ns * NR * d; ++x) qb[x] *= pr.scale;
      std::fill(acc, acc + dm * bq, T(0));
      std::fill(mrow, mrow + bq, -std::numeric_limits<T>::infinity());
      std::fill(lrow, lrow + bq, T(0));
      for (int64_t s = 0; s < ns; ++s) {
        // The queries of this sliver see keys [0, vis); the first of them sees the fewest.
        const int64_t q0 = i0 + s * NR, vis = pr.visible(std::min(q0 + NR, nq) - 1), vis_first = pr.visible(q0);
        const T* qs = qb + s * NR * d;
        T* ps = pt + s * bc * NR;
        for (int64_t j0 = 0; j0 < vis; j0 += bc) {
          const int64_t n = std::min(bc, vis - j0), kp = ceil_div(n, MR);
          if (k_in_place)
            for (int64_t ip = 0; ip < kp; ++ip)
              cfg.rows_a_kernel(std::min<int64_t>(MR, n - ip * MR))(d, kh + (j0 + ip * MR) * d, d, qs,
                                                                     ps + ip * MR * NR, NR, false, nullptr, 0);
          else
            for (int64_t ip = 0; ip < kp; ++ip)
              cfg.kernel(d, ka + (j0 + ip * MR) * d, qs, ps + ip * MR * NR, NR, false);
          const bool masked = vis_first < j0 + n;
          if (masked)
            for (int c = 0; c < NR; ++c) lim[c] = int32_t(std::clamp<int64_t>(pr.visible(q0 + c) - j0, 0, n));
          const bool moved =
              rows.softmax_cols(ps, n, NR, masked ? lim.data() : nullptr, mrow + s * NR, lrow + s * NR, alpha + s * NR);
          // On the first block alpha is 0 and the accumulator still 0; on most later ones no
          // query's max moved (the lazy max of flash2_rows.h), alpha is 1 and O stays as it is.
          if (j0 > 0 && moved)
            for (int64_t r = 0; r < d; ++r) {
              T* arow = acc + r * bq + s * NR;
              const T* al = alpha + s * NR;
#pragma omp simd
              for (int c = 0; c < NR; ++c) arow[c] *= al[c];
            }
          a_slivers_times_b(cfg, d, n, va + j0 * MR, MR * nk, ps, acc + s * NR, MR * bq, bq, true);
        }
      }
      T* ob = o + (h * nq + i0) * d;
      write_output(acc, bq, m, d, lrow, cfg.isa, ob);
      for (int64_t r = 0; r < m; ++r) lse[h * nq + i0 + r] = attention_math::online_lse(mrow[r], lrow[r]);
    }
  });
}

template <class T>
void flash2_backward(const Problem<T>& pr, const T* q, const T* k, const T* v, const T* o, const T* lse,
                     const T* dout, T* dq, T* dk, T* dv, CpuIsa isa) {
  const PackedConfig<T> cfg = config<T>(isa);
  const Flash2Rows<T> rows = flash2_rows<T>(isa);
  const int MR = cfg.mr, NR = cfg.nr;
  const int64_t d = pr.d, nq = pr.nq, nk = pr.nk, dm = round_up(d, MR), dp = round_up(d, NR),
                nqm = round_up(nq, MR);
  // A task is one B sliver of keys (NR of them); its query blocks are bq rows (an MR multiple).
  const int64_t bq = round_up(kBackwardQueryBlock, MR), tc = ceil_div(nk, NR);

  Tensor dvec_t = empty({pr.bh * nq}, dtype_of<T>::value);
  T* dvec = dvec_t.data<T>();
  rowdot(pr.bh * nq, d, dout, o, dvec);
  std::fill(dq, dq + pr.bh * nq * d, T(0));

  // Per head: Q and dO as A slivers (MR queries, kc = d) for S = Q_i K_j^T and dP = dO_i V_j^T,
  // and Q^T and dO^T as A slivers (MR head dimensions, k over queries) for dK_j^T += Q_i^T dS and
  // dV_j^T += dO_i^T P. Every key block reads them all. (Q and dO read where they lie instead, as
  // dS is below, ran 0.97-0.99x from N = 1024 up.)
  const int64_t per_head = 2 * nqm * d + 2 * dm * nq;
  Tensor packed = empty({pr.bh * per_head}, dtype_of<T>::value);
  parallel_for(pr.bh, task_grain(8 * nq * d), [&](int64_t b, int64_t e) {
    for (int64_t h = b; h < e; ++h) {
      T* base = packed.data<T>() + h * per_head;
      const T *qh = q + h * nq * d, *doh = dout + h * nq * d;
      pack_as_a(qh, nq, d, int64_t(1), int64_t(0), nqm / MR, d, MR, base);
      pack_as_a(doh, nq, d, int64_t(1), int64_t(0), nqm / MR, d, MR, base + nqm * d);
      pack_as_a(qh, d, int64_t(1), d, int64_t(0), dm / MR, nq, MR, base + 2 * nqm * d);
      pack_as_a(doh, d, int64_t(1), d, int64_t(0), dm / MR, nq, MR, base + 2 * nqm * d + dm * nq);
    }
  });

  std::mutex dq_mutex;
  parallel_for(pr.bh * tc, task_grain(8 * NR * nq * d), [&](int64_t b, int64_t e) {
    Tensor scratch = empty({2 * NR * d + dp * NR + 3 * bq * NR + 2 * dm * NR + (nq + MR) * dp}, dtype_of<T>::value);
    T* kt = scratch.data<T>();  // K_j^T and V_j^T as B slivers (kc = d)
    T* vt = kt + NR * d;
    T* kb = vt + NR * d;        // K_j as B slivers (k over keys) for dQ_i += dS K_j
    T* sq = kb + dp * NR;       // S, then P: bq x NR, row-major (a B sliver over queries)
    T* dps = sq + bq * NR;      // dP, then dS
    T* dsa = dps + bq * NR;     // dS as A slivers (MR queries, k over keys), where not read in place
    T* dk_acc = dsa + bq * NR;  // dK_j^T and dV_j^T: dm x NR
    T* dv_acc = dk_acc + dm * NR;
    T* dq_acc = dv_acc + dm * NR;
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
      const int64_t h = t / tc, j0 = zigzag(t % tc, tc) * NR, n = std::min<int64_t>(NR, nk - j0);
      if (h != cur) {
        flush();
        std::fill(dq_acc, dq_acc + (nq + MR) * dp, T(0));
        cur = h;
        lo_row = nq;
      }
      const T* base = packed.data<T>() + h * per_head;
      const T *qa = base, *doa = base + nqm * d, *qta = base + 2 * nqm * d, *dota = qta + dm * nq;
      pack_as_b(k + (h * nk + j0) * d, n, d, d, true, cfg, kt);
      pack_as_b(v + (h * nk + j0) * d, n, d, d, true, cfg, vt);
      pack_as_b(k + (h * nk + j0) * d, n, d, d, false, cfg, kb);
      std::fill(dk_acc, dk_acc + 2 * dm * NR, T(0));
      // Queries before the first one that sees key j0 contribute nothing (causal).
      for (int64_t i0 = pr.first_query(j0) / MR * MR; i0 < nq; i0 += bq) {
        const int64_t m = std::min(bq, nq - i0), mq = ceil_div(m, MR);
        for (int64_t ip = 0; ip < mq; ++ip) {
          cfg.kernel(d, qa + (i0 + ip * MR) * d, kt, sq + ip * MR * NR, NR, false);
          cfg.kernel(d, doa + (i0 + ip * MR) * d, vt, dps + ip * MR * NR, NR, false);
        }
        for (int64_t r = 0; r < m; ++r) {
          const int64_t i = h * nq + i0 + r, hi = std::clamp<int64_t>(pr.visible(i0 + r) - j0, 0, n);
          rows.grad_row(sq + r * NR, dps + r * NR, hi, NR, pr.scale, lse[i], dvec[i]);
        }
        a_slivers_times_b(cfg, d, m, dota + i0 * MR, MR * nq, sq, dv_acc, MR * NR, NR, true);
        a_slivers_times_b(cfg, d, m, qta + i0 * MR, MR * nq, dps, dk_acc, MR * NR, NR, true);
        // dQ_i += dS K_j, k running over the block's keys. Where the instruction set has kernels
        // that read A's rows in place, dS (m x n, rows NR apart: one 24 KiB tile in L1) is read
        // where it lies, the last panel's rows < MR with a kernel of that height; else it is
        // packed as A slivers first.
        if (cfg.kernel_rows_a) {
          for (int64_t jp = 0; jp < dp / NR; ++jp)
            for (int64_t ip = 0; ip < mq; ++ip)
              cfg.rows_a_kernel(std::min<int64_t>(MR, m - ip * MR))(n, dps + ip * MR * NR, NR, kb + jp * NR * n,
                                                                    dq_acc + (i0 + ip * MR) * dp + jp * NR, dp, true,
                                                                    nullptr, 0);
        } else {
          pack_as_a(dps, m, NR, int64_t(1), int64_t(0), mq, n, MR, dsa);
          for (int64_t jp = 0; jp < dp / NR; ++jp)
            for (int64_t ip = 0; ip < mq; ++ip)
              cfg.kernel(n, dsa + ip * MR * n, kb + jp * NR * n, dq_acc + (i0 + ip * MR) * dp + jp * NR, dp, true);
        }
        lo_row = std::min(lo_row, i0);
      }
      T* dkh = dk + (h * nk + j0) * d;
      transpose_out(dk_acc, int64_t(NR), n, d, cfg.isa, dkh);
      for (int64_t x = 0; x < n * d; ++x) dkh[x] *= pr.scale;
      transpose_out(dv_acc, int64_t(NR), n, d, cfg.isa, dv + (h * nk + j0) * d);
    }
    flush();
  });
}

template <class T>
void flash2_forward(const Problem<T>& pr, const T* q, const T* k, const T* v, T* o, T* lse) {
  flash2_forward(pr, q, k, v, o, lse, best_cpu_isa());
}

template <class T>
void flash2_backward(const Problem<T>& pr, const T* q, const T* k, const T* v, const T* o, const T* lse,
                     const T* dout, T* dq, T* dk, T* dv) {
  flash2_backward(pr, q, k, v, o, lse, dout, dq, dk, dv, best_cpu_isa());
}

#define EMBER_INSTANTIATE(T)                                                                                   \
  template void flash2_forward<T>(const Problem<T>&, const T*, const T*, const T*, T*, T*);                   \
  template void flash2_forward<T>(const Problem<T>&, const T*, const T*, const T*, T*, T*, CpuIsa);           \
  template void flash2_backward<T>(const Problem<T>&, const T*, const T*, const T*, const T*, const T*,         \
                                   const T*, T*, T*, T*);                                                     \
  template void flash2_backward<T>(const Problem<T>&, const T*, const T*, const T*, const T*, const T*,         \
                                   const T*, T*, T*, T*, CpuIsa);
EMBER_INSTANTIATE(float)
EMBER_INSTANTIATE(double)
#undef EMBER_INSTANTIATE

}  // namespace ember::cpu::attn
