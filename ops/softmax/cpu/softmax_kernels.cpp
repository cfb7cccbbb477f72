#include "ops/softmax/cpu/softmax_kernels.h"

#include "framework/core/parallel.h"
#include "framework/core/rows.h"
#include "ops/elementwise/cpu/half_cast.h"
#include "ops/softmax/cpu/online_max_sum.h"

namespace ember::cpu {
namespace {

enum class Kind { Softmax, LogSoftmax };

// Rows are independent, so threads split them; the grain keeps tiny inputs on one thread.
int64_t row_grain(int64_t len) { return std::max<int64_t>(1, 8192 / std::max<int64_t>(len, 1)); }

template <class T>
void softmax_rows(const Tensor& x, const Tensor& out, int64_t dim, Kind kind) {
  Rows in = rows_along(x, dim), o = rows_along(out, dim);
  const T* px = static_cast<const T*>(x.impl()->storage->data());
  T* po = out.data<T>() - out.offset();  // o.offset(r) counts from the storage start
  parallel_for(in.count, row_grain(in.len), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const T* row = px + in.offset(r);
      T* dst = po + o.offset(r);
      if constexpr (std::is_same_v<T, float>) {
        if (kind == Kind::Softmax && in.stride == 1 && o.stride == 1 && softmax_row_simd(row, in.len, dst)) continue;
      }
      MaxSum<T> ms = online_max_sum(row, in.len, in.stride);
      if (kind == Kind::Softmax) {
        T inv = T(1 / ms.sum);
        bool done = false;
        if constexpr (std::is_same_v<T, float>) {
          if (in.stride == 1 && o.stride == 1 && have_simd_exp() && std::isfinite(ms.max)) {
            exp_scale_simd(row, in.len, ms.max, inv, dst);
            done = true;
          }
        }
        if (!done)
          for (int64_t k = 0; k < in.len; ++k) dst[k * o.stride] = std::exp(row[k * in.stride] - ms.max) * inv;
      } else {
        T shift = T(ms.log_sum_exp());
        for (int64_t k = 0; k < in.len; ++k) dst[k * o.stride] = row[k * in.stride] - shift;
      }
    }
  });
}

// The 16-bit floats widen to float32 rows (float32 sums, as for float32 inputs) and round once.
Tensor run(const Tensor& x, int64_t dim, Kind kind, const char* op) {
  if (is_half(x.dtype())) return cast_half(run(cast_half(x, DType::Float32), dim, kind, op), x.dtype());
  Tensor out = empty(x.shape(), x.dtype());
  if (x.numel() == 0) return out;
  EMBER_DISPATCH_FLOAT(x.dtype(), op, [&] { softmax_rows<scalar_t>(x, out, dim, kind); });
  return out;
}

// Both backward rules: per row, one reduction (sum(g * y) or sum(g), accumulated in double for
// float32 as the forward's sums are) and one write, the second read of the row coming from cache.
template <class T>
void backward_rows(const Tensor& y, const Tensor& g, const Tensor& out, int64_t dim, Kind kind) {
  Rows ry = rows_along(y, dim), rg = rows_along(g, dim), o = rows_along(out, dim);
  const T* py = static_cast<const T*>(y.impl()->storage->data());
  const T* pg = static_cast<const T*>(g.impl()->storage->data());
  T* po = out.data<T>() - out.offset();
  const int64_t n = ry.len;
  parallel_for(ry.count, row_grain(n), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const T* yr = py + ry.offset(r);
      const T* gr = pg + rg.offset(r);
      T* dst = po + o.offset(r);
      const bool unit = ry.stride == 1 && rg.stride == 1 && o.stride == 1;
      double acc = 0;
      if (kind == Kind::Softmax) {
        if (unit) {
#pragma omp simd reduction(+ : acc)
          for (int64_t k = 0; k < n; ++k) acc += double(gr[k]) * double(yr[k]);
          const T s = T(acc);
#pragma omp simd
          for (int64_t k = 0; k < n; ++k) dst[k] = yr[k] * (gr[k] - s);
        } else {
          for (int64_t k = 0; k < n; ++k) acc += double(gr[k * rg.stride]) * double(yr[k * ry.stride]);
          const T s = T(acc);
          for (int64_t k = 0; k < n; ++k) dst[k * o.stride] = yr[k * ry.stride] * (gr[k * rg.stride] - s);
        }
        continue;
      }
      if (unit) {
#pragma omp simd reduction(+ : acc)
        for (int64_t k = 0; k < n; ++k) acc += double(gr[k]);
      } else {
        for (int64_t k = 0; k < n; ++k) acc += double(gr[k * rg.stride]);
      }
      const T s = T(acc);
      if constexpr (std::is_same_v<T, float>) {
        // exp(y) * s with the vectorised exp (y = log_softmax <= 0), then g minus it in place.
        if (unit && have_simd_exp()) {
          exp_scale_simd(yr, n, 0.0f, s, dst);
#pragma omp simd
          for (int64_t k = 0; k < n; ++k) dst[k] = gr[k] - dst[k];
          continue;
        }
      }
      for (int64_t k = 0; k < n; ++k) dst[k * o.stride] = gr[k * rg.stride] - std::exp(yr[k * ry.stride]) * s;
    }
  });
}

Tensor run_backward(const Tensor& y, const Tensor& g, int64_t dim, Kind kind, const char* op) {
  EMBER_CHECK(y.shape() == g.shape() && y.dtype() == g.dtype(), op, ": output ", y.dtype(), to_string(y.shape()),
              " and gradient ", g.dtype(), to_string(g.shape()), " must match");
  if (is_half(y.dtype()))
    return cast_half(run_backward(cast_half(y, DType::Float32), cast_half(g, DType::Float32), dim, kind, op), y.dtype());
  Tensor out = empty(y.shape(), y.dtype());
  if (y.numel() == 0) return out;
  EMBER_DISPATCH_FLOAT(y.dtype(), op, [&] { backward_rows<scalar_t>(y, g, out, dim, kind); });
  return out;
}

}  // namespace

Tensor softmax_backward(const Tensor& y, const Tensor& g, int64_t dim) {
  return run_backward(y, g, dim, Kind::Softmax, "softmax backward");
}
Tensor log_softmax_backward(const Tensor& y, const Tensor& g, int64_t dim) {
  return run_backward(y, g, dim, Kind::LogSoftmax, "log_softmax backward");
}

Tensor softmax(const Tensor& x, int64_t dim) { return run(x, dim, Kind::Softmax, "softmax"); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return run(x, dim, Kind::LogSoftmax, "log_softmax"); }

Tensor logsumexp(const Tensor& x, int64_t dim) {
  if (is_half(x.dtype())) return cast_half(logsumexp(cast_half(x, DType::Float32), dim), x.dtype());
  Shape os = x.shape();
  if (!os.empty()) os[size_t(dim)] = 1;
  Tensor out = empty(os, x.dtype());
  if (out.numel() == 0) return out;
  EMBER_DISPATCH_FLOAT(x.dtype(), "logsumexp", [&] {
    Rows in = rows_along(x, dim), o = rows_along(out, dim);
    const scalar_t* px = static_cast<const scalar_t*>(x.impl()->storage->data());
    scalar_t* po = out.data<scalar_t>() - out.offset();  // o.offset(r) counts from the storage start
    parallel_for(in.count, row_grain(in.len), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r)
        po[o.offset(r)] = scalar_t(online_max_sum(px + in.offset(r), in.len, in.stride).log_sum_exp());
    });
  });
  return out;
}

}  // namespace ember::cpu
