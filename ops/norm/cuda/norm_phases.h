// The CUDA norm kernels' per-thread phases, __host__ __device__, split where the kernels have
// __syncthreads(): layer norm (one block per row) and batch norm's statistics (one block per
// channel). Both sum shifted values and their squares (shifted by the first element, against
// cancellation) in a shared-memory tree. layer_norm.cu and batch_norm.cu place the barriers; the
// CPU block emulator of tests/ops/norm/cuda/norm_emulator_test.cpp runs the same phases.
// Phases: fold, then combine for stride = threads/2, ..., 1 (a barrier after each), then the
// finishing phase (write / finish), which reads the sums in part 0.
#pragma once
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "framework/core/host_device.h"
#include "framework/cuda/row_launch.h"

namespace ember::cuda {

template <class Acc>
struct ShiftedMoments {
  static_assert(2 * sizeof(Acc) <= kRowPartBytes, "the partials must fit kRowSharedBytes");
  struct Shared {
    Acc s1[kRowThreads], s2[kRowThreads];
  };
  EMBER_HD static void combine(Shared& s, int thread, int stride) {
    if (thread < stride) {
      s.s1[thread] += s.s1[thread + stride];
      s.s2[thread] += s.s2[thread + stride];
    }
  }
};

template <class T>
struct LayerNormRow {
  using Acc = std::conditional_t<std::is_same_v<T, float>, double, T>;
  using M = ShiftedMoments<Acc>;
  using Shared = typename M::Shared;

  EMBER_HD static void fold(const T* x, int64_t n, Shared& s, int64_t block, int thread, int threads) {
    const T* row = x + block * n;
    Acc k0 = row[0], a1 = 0, a2 = 0;
    for (int64_t k = thread; k < n; k += threads) {
      Acc v = Acc(row[k]) - k0;
      a1 += v;
      a2 += v * v;
    }
    s.s1[thread] = a1;
    s.s2[thread] = a2;
  }
  EMBER_HD static void combine(Shared& s, int thread, int stride) { M::combine(s, thread, stride); }
  // w, b (strides sw, sb), mean_out and rstd_out may be null.
  EMBER_HD static void write(const T* x, const T* w, int64_t sw, const T* b, int64_t sb, T* out, T* mean_out, T* rstd_out,
                             int64_t n, double eps, const Shared& s, int64_t block, int thread, int threads) {
    const T* row = x + block * n;
    const Acc k0 = row[0];
    Acc m1 = s.s1[0] / Acc(n);
    Acc var = s.s2[0] / Acc(n) - m1 * m1;
    if (var < 0) var = 0;
    T tm = T(k0 + m1), tr = T(1 / sqrt(var + Acc(eps)));
    T* dst = out + block * n;
    for (int64_t k = thread; k < n; k += threads) {
      T v = (row[k] - tm) * tr;
      if (w) v *= w[k * sw];
      if (b) v += b[k * sb];
      dst[k] = v;
    }
    if (thread == 0) {
      if (mean_out) mean_out[block] = tm;
      if (rstd_out) rstd_out[block] = tr;
    }
  }
};

// x is (n, c, s) contiguous; the block of channel ch reduces its n * s values.
template <class T>
struct BatchNormChannel {
  using M = ShiftedMoments<double>;
  using Shared = M::Shared;

  EMBER_HD static void fold(const T* x, int64_t n, int64_t c, int64_t s, Shared& sh, int64_t ch, int thread, int threads) {
    const int64_t count = n * s;
    const double k0 = double(x[ch * s]);
    double a1 = 0, a2 = 0;
    for (int64_t e = thread; e < count; e += threads) {
      const int64_t i = e / s, k = e % s;
      const double v = double(x[(i * c + ch) * s + k]) - k0;
      a1 += v;
      a2 += v * v;
    }
    sh.s1[thread] = a1;
    sh.s2[thread] = a2;
  }
  EMBER_HD static void combine(Shared& sh, int thread, int stride) { M::combine(sh, thread, stride); }
  // Thread 0 writes the channel's statistics and the affine map y = x * scale + shift (w, b may be null).
  EMBER_HD static void finish(const T* x, const T* w, const T* b, int64_t n, int64_t s, double eps, T* mean, T* rstd,
                              T* var, T* scale, T* shift, const Shared& sh, int64_t ch, int thread) {
    if (thread != 0) return;
    const int64_t count = n * s;
    const double k0 = double(x[ch * s]);
    const double m1 = sh.s1[0] / double(count);
    double v = sh.s2[0] / double(count) - m1 * m1;
    if (v < 0) v = 0;
    const double r = 1.0 / sqrt(v + eps), wc = w ? double(w[ch]) : 1.0, bc = b ? double(b[ch]) : 0.0;
    mean[ch] = T(k0 + m1);
    rstd[ch] = T(r);
    var[ch] = T(v);
    scale[ch] = T(r * wc);
    shift[ch] = T(bc - (k0 + m1) * r * wc);
  }
};

}  // namespace ember::cuda
