// Algorithm 0 on the CPU: S = scale Q K^T is written to main memory, read back for the softmax,
// P is written, and read again for O = P V; the backward reads P and writes dP / dS (N x N each).
// Work is split into strips of rows (and, for the products with P^T and dS^T, strips of columns)
// so that both cores are busy. The forward comes in two loop orders over the same steps:
// "standard" runs all three on a strip before the next strip (its S stays in cache), "unfused"
// runs each step over every strip before the next step (S and P go through main memory).
#include <algorithm>
#include <chrono>
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

namespace {

// The three steps of Algorithm 0 on one strip of m query rows (rows i0 .. i0 + m of slice bh).
template <class T>
struct Strip {
  const Problem<T>& pr;
  int64_t bh, i0, m;
  int64_t vis() const { return pr.visible(i0 + m - 1); }  // keys that some row of the strip sees
};
template <class T>
Strip<T> strip_of(const Problem<T>& pr, int64_t t) {
  const int64_t strips = (pr.nq + pr.br - 1) / pr.br, i0 = (t % strips) * pr.br;
  return {pr, t / strips, i0, std::min(pr.br, pr.nq - i0)};
}

// 1. S = scale Q K^T, written to main memory (into p). kt: d x bc scratch.
template <class T>
void scores_step(const Strip<T>& s, const T* q, const T* k, T* p, T* kt) {
  const Problem<T>& pr = s.pr;
  const int64_t d = pr.d, nk = pr.nk, cs = pr.bc, m = s.m, vis = s.vis(), E = sizeof(T);
  const T* qb = q + (s.bh * pr.nq + s.i0) * d;
  const T* kb = k + s.bh * pr.kv_stride();
  T* pb = p + (s.bh * pr.nq + s.i0) * nk;
  count_read(m * d, E);
  for (int64_t j0 = 0; j0 < vis; j0 += cs) {
    const int64_t n = std::min(cs, vis - j0);
    count_read(n * d, E);
    if (m < kFewRows) {
      gemm_a_bt_rows(m, n, d, pr.scale, qb, d, kb + j0 * d, d, pb + j0, nk);
      continue;
    }
    transpose_into(n, d, kb + j0 * d, d, kt);
    gemm_a_bt(m, n, d, pr.scale, qb, d, kt, pb + j0, nk);
  }
  count_write(m * vis, E);
}

// 2. P = softmax(S), row by row, in place; masked entries become exact zeros.
template <class T>
void softmax_step(const Strip<T>& s, T* p, T* lse) {
  const Problem<T>& pr = s.pr;
  const int64_t nk = pr.nk, m = s.m, E = sizeof(T);
  T* pb = p + (s.bh * pr.nq + s.i0) * nk;
  for (int64_t r = 0; r < m; ++r) {
    T* row = pb + r * nk;
    const int64_t vr = pr.visible(s.i0 + r);
    T mx = -std::numeric_limits<T>::infinity();
    for (int64_t j = 0; j < vr; ++j) mx = std::max(mx, row[j]);
    exp_shifted(row, row, vr, mx);
    T sum = 0;
    for (int64_t j = 0; j < vr; ++j) sum += row[j];
    const T inv = T(1) / sum;
    for (int64_t j = 0; j < vr; ++j) row[j] *= inv;
    std::fill(row + vr, row + nk, T(0));
    lse[s.bh * pr.nq + s.i0 + r] = attention_math::online_lse(mx, sum);  // one block: m + log l
  }
  count_read(m * s.vis(), E);
  count_write(m * nk + m, E);
}

// 3. O = P V.
template <class T>
void output_step(const Strip<T>& s, const T* v, const T* p, T* o) {
  const Problem<T>& pr = s.pr;
  const int64_t d = pr.d, nk = pr.nk, m = s.m, vis = s.vis(), E = sizeof(T);
  const T* vb = v + s.bh * pr.kv_stride();
  const T* pb = p + (s.bh * pr.nq + s.i0) * nk;
  T* ob = o + (s.bh * pr.nq + s.i0) * d;
  std::fill(ob, ob + m * d, T(0));
  gemm_acc_ab(m, d, vis, T(1), pb, nk, vb, d, ob, d);
  count_read(m * vis + vis * d, E);
  count_write(m * d, E);
}

template <class T>
int64_t strip_count(const Problem<T>& pr) {
  return pr.bh * ((pr.nq + pr.br - 1) / pr.br);
}

double now_ms() { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::mutex g_phase_mutex;
AttentionPhaseTimes g_last_phases;

}  // namespace

// The three steps strip by strip: a strip's S and P (br x N) are still in cache when the next step
// reads them, so in practice P is written to memory once.
template <class T>
void standard_forward(const Problem<T>& pr, const T* q, const T* k, const T* v, T* p, T* o, T* lse) {
  parallel_for(strip_count(pr), task_grain(4 * pr.br * pr.nk * pr.d), [&](int64_t b, int64_t e) {
    Tensor scratch = empty({pr.d * pr.bc}, dtype_of<T>::value);
    for (int64_t t = b; t < e; ++t) {
      const Strip<T> s = strip_of(pr, t);
      scores_step(s, q, k, p, scratch.data<T>());
      softmax_step(s, p, lse);
      output_step(s, v, p, o);
    }
  });
}

// The same steps, each over the whole N x N matrix before the next starts, as three separate
// kernels (the paper's HBM round trips): S is written, read back and P written, P read again.
template <class T>
void unfused_forward(const Problem<T>& pr, const T* q, const T* k, const T* v, T* p, T* o, T* lse) {
  const int64_t strips = strip_count(pr);
  AttentionPhaseTimes t;
  double t0 = now_ms();
  parallel_for(strips, task_grain(2 * pr.br * pr.nk * pr.d), [&](int64_t b, int64_t e) {
    Tensor scratch = empty({pr.d * pr.bc}, dtype_of<T>::value);
    for (int64_t i = b; i < e; ++i) scores_step(strip_of(pr, i), q, k, p, scratch.data<T>());
  });
  double t1 = now_ms();
  parallel_for(strips, task_grain(8 * pr.br * pr.nk), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) softmax_step(strip_of(pr, i), p, lse);
  });
  double t2 = now_ms();
  parallel_for(strips, task_grain(2 * pr.br * pr.nk * pr.d), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) output_step(strip_of(pr, i), v, p, o);
  });
  double t3 = now_ms();
  t.scores_ms = t1 - t0, t.softmax_ms = t2 - t1, t.output_ms = t3 - t2;
  std::lock_guard<std::mutex> lock(g_phase_mutex);
  g_last_phases = t;
}

AttentionPhaseTimes last_unfused_phase_times() {
  std::lock_guard<std::mutex> lock(g_phase_mutex);
  return g_last_phases;
}

template <class T>
void standard_backward(const Problem<T>& pr, const T* q, const T* k, const T* v, const T* o, const T* p,
                       const T* dout, T* ds, T* dq, T* dk, T* dv) {
  const int64_t d = pr.d, nq = pr.nq, nk = pr.nk, rs = pr.br, cs = pr.bc, E = sizeof(T);
  Tensor dvec_t = empty({pr.bh * nq}, dtype_of<T>::value);
  T* dvec = dvec_t.data<T>();
  rowdot(pr.bh * nq, d, dout, o, dvec);
  count_read(2 * pr.bh * nq * d, E);  // rowdot's reads and writes
  count_write(pr.bh * nq, E);

  // Pass 1, by row strips: dP = dO V^T (written), dS = P * (dP - D) (in place), dQ = scale dS K.
  const int64_t rstrips = (nq + rs - 1) / rs;
  parallel_for(pr.bh * rstrips, task_grain(4 * rs * nk * d), [&](int64_t b, int64_t e) {
    Tensor scratch = empty({d * cs}, dtype_of<T>::value);
    T* vt = scratch.data<T>();
    for (int64_t t = b; t < e; ++t) {
      const int64_t bh = t / rstrips, i0 = (t % rstrips) * rs, m = std::min(rs, nq - i0);
      const T* dob = dout + (bh * nq + i0) * d;
      const T* kb = k + bh * nk * d;
      const T* vb = v + bh * nk * d;
      const T* pb = p + (bh * nq + i0) * nk;
      T* dsb = ds + (bh * nq + i0) * nk;
      const int64_t vis = pr.visible(i0 + m - 1);
      count_read(m * d, E);
      for (int64_t j0 = 0; j0 < vis; j0 += cs) {
        const int64_t n = std::min(cs, vis - j0);
        transpose_into(n, d, vb + j0 * d, d, vt);
        count_read(n * d, E);
        gemm_a_bt(m, n, d, T(1), dob, d, vt, dsb + j0, nk);
      }
      count_write(m * vis, E);
      for (int64_t r = 0; r < m; ++r) {
        const T dr = dvec[bh * nq + i0 + r];
        const T* prow = pb + r * nk;
        T* srow = dsb + r * nk;
        const int64_t vr = pr.visible(i0 + r);
        for (int64_t j = 0; j < vr; ++j) srow[j] = prow[j] * (srow[j] - dr);
        std::fill(srow + vr, srow + nk, T(0));
      }
      count_read(2 * m * vis + m, E);
      count_write(m * nk, E);
      T* dqb = dq + (bh * nq + i0) * d;
      std::fill(dqb, dqb + m * d, T(0));
      gemm_acc_ab(m, d, vis, pr.scale, dsb, nk, kb, d, dqb, d);
      count_read(m * vis + vis * d, E);
      count_write(m * d, E);
    }
  });

  // Pass 2, by column strips: dV = P^T dO, dK = scale dS^T Q.
  const int64_t cstrips = (nk + cs - 1) / cs;
  parallel_for(pr.bh * cstrips, task_grain(4 * cs * nq * d), [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t bh = t / cstrips, j0 = (t % cstrips) * cs, n = std::min(cs, nk - j0);
      // Rows before i_start cannot see column j0 (causal), so their P and dS there are zero.
      const int64_t i_start = pr.first_query(j0);
      const int64_t rows = nq - i_start;
      T* dvb = dv + (bh * nk + j0) * d;
      T* dkb = dk + (bh * nk + j0) * d;
      std::fill(dvb, dvb + n * d, T(0));
      std::fill(dkb, dkb + n * d, T(0));
      if (rows <= 0) continue;
      const int64_t off = (bh * nq + i_start) * nk + j0;
      gemm_acc_atb(n, d, rows, T(1), p + off, nk, dout + (bh * nq + i_start) * d, d, dvb, d);
      gemm_acc_atb(n, d, rows, pr.scale, ds + off, nk, q + (bh * nq + i_start) * d, d, dkb, d);
      count_read(2 * rows * n + 2 * rows * d, E);
      count_write(2 * n * d, E);
    }
  });
}

#define EMBER_INSTANTIATE(T)                                                                              \
  template void standard_forward<T>(const Problem<T>&, const T*, const T*, const T*, T*, T*, T*);        \
  template void unfused_forward<T>(const Problem<T>&, const T*, const T*, const T*, T*, T*, T*);         \
  template void standard_backward<T>(const Problem<T>&, const T*, const T*, const T*, const T*, const T*, \
                                     const T*, T*, T*, T*, T*);
EMBER_INSTANTIATE(float)
EMBER_INSTANTIATE(double)
#undef EMBER_INSTANTIATE

}  // namespace ember::attention_study
