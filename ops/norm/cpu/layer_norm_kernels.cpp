#include "ops/norm/cpu/layer_norm_kernels.h"

#include <cmath>
#include <type_traits>
#include <vector>

#include "framework/core/parallel.h"
#include "framework/core/rows.h"
#include "ops/elementwise/cpu/half_cast.h"

namespace ember::cpu {
namespace {

template <class T>
void layer_norm_rows(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps, const Tensor& out,
                     T* mean_out, T* rstd_out) {
  using acc_t = std::conditional_t<std::is_same_v<T, float>, double, T>;
  int64_t dim = x.dim() - 1;
  Rows in = rows_along(x, dim);
  const T* px = static_cast<const T*>(x.impl()->storage->data());
  T* po = out.data<T>();
  const T* pw = weight.defined() ? static_cast<const T*>(weight.impl()->storage->data()) + weight.offset() : nullptr;
  const T* pb = bias.defined() ? static_cast<const T*>(bias.impl()->storage->data()) + bias.offset() : nullptr;
  int64_t sw = weight.defined() ? weight.strides()[0] : 0, sb = bias.defined() ? bias.strides()[0] : 0;
  int64_t n = in.len;
  parallel_for(in.count, std::max<int64_t>(1, 4096 / n), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const T* row = px + in.offset(r);
      // Sums of (x - K) and (x - K)^2 with K the row's first element: one pass, and no
      // cancellation when the mean is large against the spread.
      acc_t k0 = row[0], s1 = 0, s2 = 0;
      bool fast = false;
      if constexpr (std::is_same_v<T, float>) {
        if (in.stride == 1) {  // float lanes vectorise; the shift by row[0] keeps them accurate
          float f1 = 0, f2 = 0, kf = row[0];
#pragma omp simd reduction(+ : f1, f2)
          for (int64_t k = 0; k < n; ++k) {
            float v = row[k] - kf;
            f1 += v;
            f2 += v * v;
          }
          s1 = f1;
          s2 = f2;
          fast = true;
        }
      }
      if (!fast)
        for (int64_t k = 0; k < n; ++k) {
          acc_t v = acc_t(row[k * in.stride]) - k0;
          s1 += v;
          s2 += v * v;
        }
      acc_t m1 = s1 / acc_t(n);
      acc_t var = std::max<acc_t>(s2 / acc_t(n) - m1 * m1, 0);
      acc_t mean = k0 + m1, rstd = 1 / std::sqrt(var + acc_t(eps));
      T* dst = po + r * n;
      T tm = T(mean), tr = T(rstd);
      if (in.stride == 1 && pw && pb && sw == 1 && sb == 1) {  // the common case, in a loop that vectorises
#pragma omp simd
        for (int64_t k = 0; k < n; ++k) dst[k] = (row[k] - tm) * tr * pw[k] + pb[k];
      } else
      for (int64_t k = 0; k < n; ++k) {
        T v = (row[k * in.stride] - tm) * tr;
        if (pw) v *= pw[k * sw];
        if (pb) v += pb[k * sb];
        dst[k] = v;
      }
      if (mean_out) mean_out[r] = tm;
      if (rstd_out) rstd_out[r] = tr;
    }
  });
}

template <class T>
void backward_input_rows(const Tensor& x, const T* mean, const T* rstd, const Tensor& weight, const Tensor& g,
                         const Tensor& out) {
  const int64_t dim = x.dim() - 1;
  Rows rx = rows_along(x, dim), rg = rows_along(g, dim);
  const T* px = static_cast<const T*>(x.impl()->storage->data());
  const T* pg = static_cast<const T*>(g.impl()->storage->data());
  const T* pw = weight.defined() ? static_cast<const T*>(weight.impl()->storage->data()) + weight.offset() : nullptr;
  const int64_t sw = weight.defined() ? weight.strides()[0] : 0, n = rx.len;
  T* po = out.data<T>();
  parallel_for(rx.count, std::max<int64_t>(1, 4096 / n), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const T* xr = px + rx.offset(r);
      const T* gr = pg + rg.offset(r);
      T* dst = po + r * n;
      const T m = mean[r], rs = rstd[r];
      // Sums of gw and gw * xhat; double for float32, as the forward's statistics are.
      double s1 = 0, s2 = 0;
      if (rx.stride == 1 && rg.stride == 1 && pw && sw == 1) {
#pragma omp simd reduction(+ : s1, s2)
        for (int64_t k = 0; k < n; ++k) {
          const T gw = gr[k] * pw[k];
          s1 += double(gw);
          s2 += double(gw) * double((xr[k] - m) * rs);
        }
        const T a = T(s1 / double(n)), c = T(s2 / double(n));
#pragma omp simd
        for (int64_t k = 0; k < n; ++k) dst[k] = rs * (gr[k] * pw[k] - a - (xr[k] - m) * rs * c);
        continue;
      }
      for (int64_t k = 0; k < n; ++k) {
        const T gw = pw ? gr[k * rg.stride] * pw[k * sw] : gr[k * rg.stride];
        s1 += double(gw);
        s2 += double(gw) * double((xr[k * rx.stride] - m) * rs);
      }
      const T a = T(s1 / double(n)), c = T(s2 / double(n));
      for (int64_t k = 0; k < n; ++k) {
        const T gw = pw ? gr[k * rg.stride] * pw[k * sw] : gr[k * rg.stride];
        dst[k] = rs * (gw - a - (xr[k * rx.stride] - m) * rs * c);
      }
    }
  });
}

template <class T>
void backward_weight_rows(const Tensor& x, const T* mean, const T* rstd, const Tensor& g, T* dw) {
  const int64_t dim = x.dim() - 1;
  Rows rx = rows_along(x, dim), rg = rows_along(g, dim);
  const T* px = static_cast<const T*>(x.impl()->storage->data());
  const T* pg = static_cast<const T*>(g.impl()->storage->data());
  const int64_t n = rx.len;
  // Each thread sums its block of rows into its own double vector; the blocks are added in order,
  // so the result does not depend on timing.
  const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(num_threads(), rx.count * n / 65536));
  std::vector<double> partial(size_t(parts * n), 0.0);
  parallel_for(parts, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      double* acc = partial.data() + t * n;
      for (int64_t r = rx.count * t / parts; r < rx.count * (t + 1) / parts; ++r) {
        const T* xr = px + rx.offset(r);
        const T* gr = pg + rg.offset(r);
        const T m = mean[r], rs = rstd[r];
        if (rx.stride == 1 && rg.stride == 1) {
#pragma omp simd
          for (int64_t k = 0; k < n; ++k) acc[k] += double(gr[k] * ((xr[k] - m) * rs));
        } else {
          for (int64_t k = 0; k < n; ++k) acc[k] += double(gr[k * rg.stride] * ((xr[k * rx.stride] - m) * rs));
        }
      }
    }
  });
  for (int64_t k = 0; k < n; ++k) {
    double s = 0;
    for (int64_t t = 0; t < parts; ++t) s += partial[size_t(t * n + k)];
    dw[k] = T(s);
  }
}

void check_backward_args(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& g) {
  Shape ss = x.shape();
  ss.back() = 1;
  EMBER_CHECK(g.shape() == x.shape() && g.dtype() == x.dtype(), "layer_norm backward: gradient ", g.dtype(),
              to_string(g.shape()), " must match the input ", x.dtype(), to_string(x.shape()));
  const DType st = is_half(x.dtype()) ? DType::Float32 : x.dtype();  // the statistics' dtype
  EMBER_CHECK(mean.shape() == ss && rstd.shape() == ss && mean.is_contiguous() && rstd.is_contiguous() &&
                  mean.dtype() == st && rstd.dtype() == st,
              "layer_norm backward: mean and rstd must be contiguous ", st, " of shape ", to_string(ss),
              " (the forward's statistics), got ", to_string(mean.shape()), " and ", to_string(rstd.shape()));
}

}  // namespace

// The 16-bit floats: rows widened to float32, the output rounded once; the statistics stay float32.
static Tensor f32(const Tensor& t) { return t.defined() && is_half(t.dtype()) ? cast_half(t, DType::Float32) : t; }

Tensor layer_norm_backward_input(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& weight,
                                 const Tensor& g) {
  check_backward_args(x, mean, rstd, g);
  if (is_half(x.dtype()))
    return cast_half(layer_norm_backward_input(f32(x), mean, rstd, f32(weight), f32(g)), x.dtype());
  Tensor out = empty(x.shape(), x.dtype());
  if (x.numel() == 0) return out;
  EMBER_DISPATCH_FLOAT(x.dtype(), "layer_norm backward", [&] {
    backward_input_rows<scalar_t>(x, mean.data<scalar_t>(), rstd.data<scalar_t>(), weight, g, out);
  });
  return out;
}

Tensor layer_norm_backward_weight(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& g) {
  check_backward_args(x, mean, rstd, g);
  if (is_half(x.dtype())) return cast_half(layer_norm_backward_weight(f32(x), mean, rstd, f32(g)), x.dtype());
  Tensor dw = empty({x.size(-1)}, x.dtype());
  EMBER_DISPATCH_FLOAT(x.dtype(), "layer_norm backward", [&] {
    backward_weight_rows<scalar_t>(x, mean.data<scalar_t>(), rstd.data<scalar_t>(), g, dw.data<scalar_t>());
  });
  return dw;
}

Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps, Tensor* mean, Tensor* rstd) {
  if (is_half(x.dtype())) return cast_half(layer_norm(f32(x), f32(weight), f32(bias), eps, mean, rstd), x.dtype());
  Tensor out = empty(x.shape(), x.dtype());
  Shape ss = x.shape();
  ss.back() = 1;
  if (mean) *mean = empty(ss, x.dtype());
  if (rstd) *rstd = empty(ss, x.dtype());
  if (x.numel() == 0) return out;
  EMBER_DISPATCH_FLOAT(x.dtype(), "layer_norm", [&] {
    layer_norm_rows<scalar_t>(x, weight, bias, eps, out, mean ? mean->data<scalar_t>() : nullptr,
                              rstd ? rstd->data<scalar_t>() : nullptr);
  });
  return out;
}

}  // namespace ember::cpu
