#include "ops/norm/cpu/layer_norm_kernels.h"

#include <cmath>
#include <type_traits>

#include "framework/parallel.h"
#include "framework/rows.h"

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

}  // namespace

Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps, Tensor* mean, Tensor* rstd) {
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
